/**
 * The Overview's Publishing panel (issue 33): pages waiting, rendering now, the last pages written,
 * failed renders with their error and a Retry, and the search index; polled every 2 s while work is
 * queued or failing, every 15 s otherwise.
 */
import { useEffect, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ApiRequestError, serverMessageOf } from '../../lib/api-client.ts';
import type { PublishingRetry, PublishingRetryResult, PublishingStatus } from '../../schemas/publishing.ts';
import { toast } from '../toast/toast-store.ts';
import { adminKeys } from './admin-queries.ts';
import { QueryFailure, Spinner, toastFailure } from './AdminUi.tsx';
import { formatDateTime } from './admin-format.ts';
import { formatDuration, formatElapsed } from './publishing-format.ts';

const BUSY_POLL_MS = 2000;
const IDLE_POLL_MS = 15_000;

const SEARCH_STATE: Record<PublishingStatus['search']['state'], string> = {
  idle: 'Up to date',
  waiting: 'Waiting for pages',
  building: 'Building',
};

/** Whether anything is queued, running or failing: then the panel asks again every 2 s. */
export function isPublishingBusy(status: PublishingStatus | undefined): boolean {
  if (!status) return false;
  return (
    status.waiting > 0 ||
    status.renderingNow.length > 0 ||
    status.failed.length > 0 ||
    status.search.state !== 'idle' ||
    status.reconciling > 0
  );
}

/** Ticks once a second, so "12 s ago" stays true between polls. */
function useNow(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

/** A relative time with the absolute one as its title and datetime. */
function Ago({ iso, now }: { iso: string; now: number }) {
  return (
    <time dateTime={iso} title={formatDateTime(iso)}>
      {formatElapsed(iso, now)}
    </time>
  );
}

/** When the worker tries a failed job by itself; a time passed between two polls means it is taking it up. */
function NextTry({ iso, now }: { iso: string; now: number }) {
  return <> · next try {Date.parse(iso) > now ? <Ago iso={iso} now={now} /> : 'now'}</>;
}

export function PublishingPanel() {
  const client = useQueryClient();
  const now = useNow();
  const status = useQuery<PublishingStatus>({
    queryKey: adminKeys.publishing(),
    refetchInterval: (query) => (isPublishingBusy(query.state.data) ? BUSY_POLL_MS : IDLE_POLL_MS),
  });
  const retry = useMutation({
    mutationFn: (input: PublishingRetry) => api.post<PublishingRetryResult>('/api/publishing/retry', input),
    onSuccess: (result) => toast({ title: 'Retry started', description: result.message }),
    onError: (error, input) =>
      // The job's own retry may write the page between the panel's last poll and the click: not a failure.
      error instanceof ApiRequestError && error.status === 404 && 'id' in input
        ? toast({ title: 'Nothing to retry', description: 'The page was written meanwhile.' })
        : toastFailure(serverMessageOf(error, 'Failed to retry the render.')),
    onSettled: () => client.invalidateQueries({ queryKey: adminKeys.publishing() }),
  });

  const data = status.data;
  return (
    <section className="adm-card adm-publishing" aria-labelledby="publishing-heading" data-testid="publishing-panel">
      <h2 id="publishing-heading" className="adm-card-title">
        Publishing
      </h2>
      {status.isPending ? (
        <Spinner label="Loading the publishing queue" />
      ) : status.isError || !data ? (
        <QueryFailure what="the publishing queue" onRetry={() => void status.refetch()} />
      ) : (
        <div className="adm-stack adm-publishing-body">
          <dl className="adm-pub-figures">
            <div data-testid="pub-waiting">
              <dt>Waiting</dt>
              <dd>{data.waiting}</dd>
            </div>
            <div data-testid="pub-rendering">
              <dt>Rendering now</dt>
              <dd>{data.renderingNow.length}</dd>
            </div>
            <div data-testid="pub-failed">
              <dt>Failed</dt>
              <dd>{data.failed.length}</dd>
            </div>
            <div data-testid="pub-search">
              <dt>Search index</dt>
              <dd>
                {SEARCH_STATE[data.search.state]}
                {data.search.pending > 0 && ` (${data.search.pending} queued)`}
              </dd>
            </div>
            {data.reconciling > 0 && (
              <div data-testid="pub-reconciling">
                <dt>Pages to re-check</dt>
                <dd>
                  {data.reconciling}
                  {data.reconcile && ` of ${data.reconcile.total}`}
                  {data.reconcile?.secondsLeft !== undefined && `, about ${data.reconcile.secondsLeft} s left`}
                </dd>
              </div>
            )}
          </dl>

          {data.renderingNow.length > 0 && (
            <ul className="adm-pub-list" aria-label="Rendering now">
              {data.renderingNow.map((job) => (
                <li key={job.path} className="adm-pub-row">
                  <code className="adm-break">{job.path}</code>
                  <span className="adm-muted">
                    rendering since <Ago iso={job.since} now={now} />
                  </span>
                </li>
              ))}
            </ul>
          )}

          {data.failed.length > 0 && (
            <div>
              <div className="adm-pub-head">
                <h3 className="adm-pub-title">Failed renders</h3>
                {data.failed.length > 1 && (
                  <button
                    type="button"
                    className="adm-btn adm-btn-outline adm-btn-sm"
                    disabled={retry.isPending}
                    onClick={() => retry.mutate({ all: true })}
                  >
                    Retry all
                  </button>
                )}
              </div>
              <ul className="adm-pub-list">
                {data.failed.map((job) => (
                  <li key={job.id} className="adm-pub-row adm-pub-failed" data-testid="failed-render">
                    <div className="adm-row-main">
                      <code className="adm-break">{job.path}</code>
                      <p className="adm-error-text">{job.error}</p>
                      <p className="adm-muted">
                        {job.attempts} {job.attempts === 1 ? 'attempt' : 'attempts'}
                        {job.nextTryAt && <NextTry iso={job.nextTryAt} now={now} />}
                      </p>
                    </div>
                    <button
                      type="button"
                      className="adm-btn adm-btn-outline adm-btn-sm"
                      aria-label={`Retry ${job.path}`}
                      disabled={retry.isPending && retry.variables && 'id' in retry.variables && retry.variables.id === job.id}
                      onClick={() => retry.mutate({ id: job.id })}
                    >
                      Retry
                    </button>
                  </li>
                ))}
              </ul>
            </div>
          )}

          <div>
            <h3 className="adm-pub-title">Last pages written</h3>
            {data.recent.length === 0 ? (
              <p className="adm-muted">No page rendered since this server started.</p>
            ) : (
              <ul className="adm-pub-list">
                {data.recent.map((entry) => (
                  <li key={`${entry.path}-${entry.at}`} className="adm-pub-row" data-testid="recent-render" data-outcome={entry.outcome}>
                    <code className="adm-break">{entry.path}</code>
                    <span className="adm-muted">
                      {entry.outcome} in {formatDuration(entry.ms)}, <Ago iso={entry.at} now={now} />
                    </span>
                  </li>
                ))}
              </ul>
            )}
          </div>

          <p className="adm-muted">
            Search index last built:{' '}
            {data.search.lastBuiltAt ? (
              <>
                <Ago iso={data.search.lastBuiltAt} now={now} />
                {data.search.lastMs !== undefined && ` in ${formatDuration(data.search.lastMs)}`}
              </>
            ) : (
              'not since this server started'
            )}
            . Rendering now and the last pages are this server&apos;s; the queue and its failures are every server&apos;s.
          </p>
        </div>
      )}
    </section>
  );
}
