/** Subscribers tab: counts, the last briefing, search and status filter, remove, CSV export, briefing preview and test copy. */
import { useState, type FormEvent } from 'react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, serverMessageOf } from '../../lib/api-client.ts';
import type { SubscriberListing, SubscriberStatus } from '../../schemas/newsletter.ts';
import { toast } from '../toast/toast-store.ts';
import { adminKeys, ADMIN_SUBSCRIBERS_PAGE_SIZE, invalidateSubscribers } from './admin-queries.ts';
import { formatDateTime } from './admin-format.ts';
import { Pagination } from './Pagination.tsx';
import { confirmDelete, QueryFailure, SearchStatusFilter, Spinner, StatusBadge, toastFailure } from './AdminUi.tsx';

type Preview = { subject: string; text: string; articles: number };

function LastBriefing({ last }: { last: SubscriberListing['lastBriefing'] }) {
  if (!last) return <p data-testid="last-briefing">No briefing has been sent yet.</p>;
  if (last.status === 'sending')
    return (
      <p data-testid="last-briefing">
        The briefing of {last.date} is being sent: {last.sent} of {last.recipients} so far.
      </p>
    );
  if (last.recipients === 0 || last.sent + last.failed + last.unknown === 0) {
    return (
      <p data-testid="last-briefing">The briefing of {last.date} had nothing to send (no new articles or no confirmed subscribers).</p>
    );
  }
  return (
    <p data-testid="last-briefing">
      Last briefing: <time dateTime={last.finishedAt ?? last.startedAt}>{formatDateTime(last.finishedAt ?? last.startedAt)}</time>, sent to{' '}
      {last.sent} {last.sent === 1 ? 'subscriber' : 'subscribers'}
      {last.failed > 0 ? `, ${last.failed} failed` : ''}
      {last.unknown > 0 ? `, ${last.unknown} interrupted` : ''}
      {last.forced ? ' (sent again by hand)' : ''}.
    </p>
  );
}

function BriefingTools() {
  const [showPreview, setShowPreview] = useState(false);
  const [testAddress, setTestAddress] = useState('');
  const preview = useQuery<Preview>({ queryKey: adminKeys.briefingPreview(), enabled: showPreview });
  const sendTest = useMutation({
    mutationFn: (email: string) => api.post<{ message: string }>('/api/newsletter/briefing/test', { email }),
    onSuccess: (result) => toast({ title: 'Test copy sent', description: result.message }),
    onError: (error) => toastFailure(serverMessageOf(error, 'Failed to send the test copy. Please try again.')),
  });
  const onSend = (event: FormEvent) => {
    event.preventDefault();
    if (!testAddress.includes('@')) {
      toastFailure('Please enter a valid email address.');
      return;
    }
    sendTest.mutate(testAddress.trim());
  };
  return (
    <section className="adm-card adm-stack" aria-labelledby="briefing-tools-title">
      <h2 id="briefing-tools-title" className="adm-card-title">
        Morning briefing
      </h2>
      <div className="adm-actions">
        <button type="button" className="adm-btn adm-btn-outline" onClick={() => setShowPreview((v) => !v)} aria-expanded={showPreview}>
          {showPreview ? 'Hide preview' : 'Preview briefing'}
        </button>
        <a className="adm-btn adm-btn-ghost" href="/api/newsletter/briefing/preview?format=html" target="_blank" rel="noopener">
          Open as e-mail
        </a>
      </div>
      {showPreview &&
        (preview.isPending ? (
          <Spinner label="Loading preview" />
        ) : preview.isError ? (
          <QueryFailure what="the preview" onRetry={() => void preview.refetch()} />
        ) : (
          <div data-testid="briefing-preview">
            <p>
              <strong>Subject:</strong> {preview.data.subject}
            </p>
            <p className="adm-muted">
              {preview.data.articles === 0
                ? 'No new articles since the last briefing: nothing would be sent.'
                : `${preview.data.articles} articles`}
            </p>
            <pre className="adm-briefing-text" tabIndex={0} aria-label="Plain-text part of the briefing">
              {preview.data.text}
            </pre>
          </div>
        ))}
      <form className="adm-filters" onSubmit={onSend} aria-label="Send a test copy" noValidate>
        <label className="adm-field adm-field-wide">
          <span>Send a test copy to</span>
          <input
            type="email"
            value={testAddress}
            onChange={(e) => setTestAddress(e.target.value)}
            placeholder="you@example.com"
            autoComplete="email"
          />
        </label>
        <div className="adm-actions adm-filters-actions">
          <button type="submit" className="adm-btn adm-btn-primary" disabled={sendTest.isPending}>
            {sendTest.isPending ? 'Sending…' : 'Send test copy'}
          </button>
        </div>
      </form>
    </section>
  );
}

export function SubscribersTab() {
  const client = useQueryClient();
  const [searchDraft, setSearchDraft] = useState('');
  const [q, setQ] = useState('');
  const [status, setStatus] = useState<'' | SubscriberStatus>('');
  const [page, setPage] = useState(1);
  const list = useQuery<SubscriberListing>({
    queryKey: adminKeys.subscribers({ q: q.trim(), status, page, pageSize: ADMIN_SUBSCRIBERS_PAGE_SIZE }),
    placeholderData: keepPreviousData,
  });
  const remove = useMutation({
    mutationFn: (id: string) => api.delete<void>(`/api/newsletter/subscribers/${id}`),
    onSuccess: () => toast({ title: 'Subscriber removed' }),
    onError: () => toastFailure('Failed to remove the subscriber. Please try again.'),
    onSettled: () => invalidateSubscribers(client),
  });
  const applySearch = (event: FormEvent) => {
    event.preventDefault();
    setQ(searchDraft);
    setPage(1);
  };
  const totalPages = list.data ? Math.ceil(list.data.total / ADMIN_SUBSCRIBERS_PAGE_SIZE) : 0;

  return (
    <div className="adm-stack">
      <section aria-label="Subscriber counts" className="adm-stats" data-testid="subscriber-counts">
        {(
          [
            ['confirmed', 'Confirmed'],
            ['pending', 'Pending'],
            ['unsubscribed', 'Unsubscribed'],
          ] as const
        ).map(([key, label]) => (
          <div className="adm-card adm-stat" key={key} data-testid={`count-${key}`}>
            <span className="adm-stat-label">{label}</span>
            <span className="adm-stat-value">{list.data ? list.data.counts[key] : list.isError ? '–' : '…'}</span>
          </div>
        ))}
      </section>
      {list.data && (
        <section className="adm-card">
          <LastBriefing last={list.data.lastBriefing} />
        </section>
      )}

      <BriefingTools />

      <SearchStatusFilter
        what="subscribers"
        placeholder="E-mail address..."
        draft={searchDraft}
        onDraft={setSearchDraft}
        status={status}
        statuses={[
          ['confirmed', 'Confirmed'],
          ['pending', 'Pending'],
          ['unsubscribed', 'Unsubscribed'],
        ]}
        onStatus={(next) => {
          setStatus(next);
          setPage(1);
        }}
        onSubmit={applySearch}
      >
        <a className="adm-btn adm-btn-outline" href="/api/newsletter/subscribers/export" download>
          Export CSV
        </a>
      </SearchStatusFilter>

      <p className="adm-muted" aria-live="polite" data-testid="subscriber-total">
        {list.data ? `${list.data.total} ${list.data.total === 1 ? 'subscriber' : 'subscribers'}` : ''}
      </p>

      {list.isPending ? (
        <Spinner label="Loading subscribers" />
      ) : list.isError ? (
        <QueryFailure what="subscribers" onRetry={() => void list.refetch()} />
      ) : list.data.items.length === 0 ? (
        <p className="adm-empty">No subscribers found.</p>
      ) : (
        <ul className="adm-list">
          {list.data.items.map((subscriber) => (
            <li key={subscriber.id} className="adm-card adm-comment" data-testid="admin-subscriber">
              <div className="adm-comment-head">
                <strong className="adm-break">{subscriber.email}</strong>
                <div className="adm-meta">
                  <StatusBadge status={subscriber.status} />
                  <time dateTime={subscriber.createdAt}>{formatDateTime(subscriber.createdAt)}</time>
                </div>
              </div>
              <div className="adm-actions">
                <button
                  type="button"
                  className="adm-btn adm-btn-danger adm-btn-sm"
                  disabled={remove.isPending && remove.variables === subscriber.id}
                  onClick={() => {
                    if (confirmDelete(`the subscriber ${subscriber.email}`)) remove.mutate(subscriber.id);
                  }}
                >
                  Remove
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}

      <Pagination page={page} totalPages={totalPages} onChange={setPage} label="Subscriber pages" />
    </div>
  );
}
