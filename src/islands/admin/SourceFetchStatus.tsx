/**
 * One news source's fetch status in the News Sources tab: the live counts of a running fetch, the last
 * result and time, and since when a failing source fails.
 */
import type { FetchProgress, NewsSource } from '../../schemas/source.ts';
import { formatDateTime } from './admin-format.ts';

const PHASES: Record<FetchProgress['phase'], string> = {
  downloading: 'Downloading the feed',
  reading: 'Reading items',
  writing: 'Writing articles',
  done: 'Done',
};

const COUNTS: { key: 'read' | 'created' | 'updated' | 'skipped' | 'refused'; label: string }[] = [
  { key: 'read', label: 'Read' },
  { key: 'created', label: 'New' },
  { key: 'updated', label: 'Updated' },
  { key: 'skipped', label: 'Skipped' },
  { key: 'refused', label: 'Refused' },
];

export function SourceFetchStatus({ source, run }: { source: NewsSource; run: FetchProgress | undefined }) {
  return (
    <div className="adm-fetch-status">
      {/* Polite: the counts change every half second while a fetch runs, a screen reader hears the latest when idle. */}
      <div role="status" aria-live="polite" aria-label={`Fetch progress of ${source.name}`}>
        {run && (
          <div className="adm-fetch-progress" data-testid="fetch-progress" data-state={run.state}>
            <span className="adm-fetch-phase">
              {run.state === 'running' ? `${PHASES[run.phase]}…` : run.state === 'failed' ? 'Last fetch failed' : 'Last fetch'}
            </span>
            <dl className="adm-fetch-counts">
              {COUNTS.map(({ key, label }) => (
                <div key={key} data-testid={`fetch-${key}`}>
                  <dt>{label}</dt>
                  <dd>{run[key]}</dd>
                </div>
              ))}
            </dl>
          </div>
        )}
      </div>
      <p className="adm-muted" data-testid="source-last-fetch">
        Last fetched: {source.lastFetchedAt ? formatDateTime(source.lastFetchedAt) : 'never'}
        {source.lastResult && !source.lastError ? ` — ${source.lastResult}` : ''}
      </p>
      {source.lastError && (
        <p className="adm-error-text" data-testid="source-error">
          Last error: {source.lastError}
          {source.failingSince && <> (failing since {formatDateTime(source.failingSince)})</>}
        </p>
      )}
    </div>
  );
}
