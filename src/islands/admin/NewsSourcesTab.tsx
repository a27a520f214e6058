/** News Sources tab: the add form, the list with last fetch and error, enable/disable, delete and fetch now with its live progress. */
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useIsMutating, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../lib/api-client.ts';
import { SECTIONS, type Section } from '../../schemas/common.ts';
import type { FetchProgress, NewsSource, NewsSourceInput } from '../../schemas/source.ts';
import { toast } from '../toast/toast-store.ts';
import { labelSection } from '../../lib/sections.ts';
import { adminKeys, invalidateArticles, invalidateSources } from './admin-queries.ts';
import { confirmDelete, QueryFailure, Spinner, toastFailure } from './AdminUi.tsx';
import { SourceFetchStatus } from './SourceFetchStatus.tsx';

/** How often the tab asks for the counts while a fetch runs. */
const PROGRESS_POLL_MS = 500;
const FETCH_NOW_KEY = ['fetch-now'];

type SourceForm = { name: string; type: NewsSource['type']; url: string; section: Section | '' };
const EMPTY_FORM: SourceForm = { name: '', type: 'rss', url: '', section: 'world' };

export function NewsSourcesTab() {
  const client = useQueryClient();
  const sources = useQuery<NewsSource[]>({ queryKey: adminKeys.sources() });
  const [formOpen, setFormOpen] = useState(false);
  const fetchingAny = useIsMutating({ mutationKey: FETCH_NOW_KEY }) > 0;
  // Polled while a fetch runs (this tab's or the scheduler's), else read once: the last run's counts stay visible.
  const progress = useQuery<{ runs: FetchProgress[] }>({
    queryKey: adminKeys.fetchProgress(),
    refetchInterval: (query) => (fetchingAny || query.state.data?.runs.some((run) => run.state === 'running') ? PROGRESS_POLL_MS : false),
  });
  const [form, setForm] = useState<SourceForm>(EMPTY_FORM);
  // A run that ended (the scheduler's too) changed the sources' last result and perhaps the articles.
  const runningCount = progress.data?.runs.filter((run) => run.state === 'running').length ?? 0;
  const lastRunningCount = useRef(0);
  useEffect(() => {
    if (runningCount < lastRunningCount.current) void Promise.all([invalidateSources(client), invalidateArticles(client)]);
    lastRunningCount.current = runningCount;
  }, [runningCount, client]);

  const add = useMutation({
    mutationFn: (input: NewsSourceInput) => api.post<NewsSource>('/api/news-sources', input),
    onSuccess: (source) => {
      toast({ title: 'News source added', description: source.name });
      setForm(EMPTY_FORM);
      setFormOpen(false);
    },
    onError: () => toastFailure('Failed to add news source.'),
    onSettled: () => invalidateSources(client),
  });
  const toggle = useMutation({
    mutationFn: ({ id, enabled }: { id: string; enabled: boolean }) => api.put<NewsSource>(`/api/news-sources/${id}`, { enabled }),
    onError: () => toastFailure('Failed to update news source.'),
    onSettled: () => invalidateSources(client),
  });
  const remove = useMutation({
    mutationFn: (id: string) => api.delete<void>(`/api/news-sources/${id}`),
    onSuccess: () => toast({ title: 'News source deleted' }),
    onError: () => toastFailure('Failed to delete news source.'),
    onSettled: () => invalidateSources(client),
  });
  const fetchNow = useMutation({
    mutationKey: FETCH_NOW_KEY,
    mutationFn: (id: string) => api.post<{ message: string }>(`/api/news-sources/${id}/fetch`),
    onMutate: () => void progress.refetch(),
    onSuccess: (result) => toast({ title: 'Feed fetched', description: result.message }),
    onError: () => toastFailure('Failed to fetch RSS feed.'),
    onSettled: async () => {
      await Promise.all([invalidateSources(client), invalidateArticles(client)]);
    },
  });

  const runs = new Map(progress.data?.runs.map((run) => [run.sourceId, run]));

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const name = form.name.trim();
    const url = form.url.trim();
    if (!name || !url || !form.section) {
      toast({ title: 'Validation error', description: 'Please fill in all required fields.', variant: 'destructive' });
      return;
    }
    add.mutate({ name, type: form.type, url, section: form.section, enabled: true });
  };

  return (
    <div className="adm-stack">
      <div className="adm-toolbar">
        <h2 className="adm-card-title">News Sources</h2>
        <button
          type="button"
          className="adm-btn adm-btn-primary"
          aria-expanded={formOpen}
          aria-controls="add-source-form"
          onClick={() => setFormOpen((open) => !open)}
        >
          {formOpen ? 'Close' : 'Add Source'}
        </button>
      </div>

      {formOpen && (
        <form id="add-source-form" className="adm-card adm-form" aria-label="Add news source" onSubmit={submit} noValidate>
          <label className="adm-field">
            <span>Name *</span>
            <input
              type="text"
              value={form.name}
              onChange={(e) => setForm({ ...form, name: e.target.value })}
              placeholder="e.g. BBC World"
            />
          </label>
          <label className="adm-field">
            <span>Type</span>
            <select value={form.type} onChange={(e) => setForm({ ...form, type: e.target.value as NewsSource['type'] })}>
              <option value="rss">RSS</option>
              <option value="api">API (Future)</option>
            </select>
          </label>
          <label className="adm-field adm-field-wide">
            <span>URL *</span>
            <input
              type="url"
              value={form.url}
              onChange={(e) => setForm({ ...form, url: e.target.value })}
              placeholder="https://example.com/feed.xml"
            />
          </label>
          <label className="adm-field">
            <span>Section *</span>
            <select value={form.section} onChange={(e) => setForm({ ...form, section: e.target.value as Section | '' })}>
              {SECTIONS.map((section) => (
                <option key={section} value={section}>
                  {labelSection(section)}
                </option>
              ))}
            </select>
          </label>
          <div className="adm-actions adm-field-wide">
            <button type="submit" className="adm-btn adm-btn-primary" disabled={add.isPending}>
              {add.isPending ? 'Adding...' : 'Add Source'}
            </button>
            <button
              type="button"
              className="adm-btn adm-btn-outline"
              onClick={() => {
                setForm(EMPTY_FORM);
                setFormOpen(false);
              }}
            >
              Cancel
            </button>
          </div>
        </form>
      )}

      {sources.isPending ? (
        <Spinner label="Loading news sources" />
      ) : sources.isError ? (
        <QueryFailure what="news sources" onRetry={() => void sources.refetch()} />
      ) : sources.data.length === 0 ? (
        <p className="adm-empty">No news sources configured yet.</p>
      ) : (
        <ul className="adm-list">
          {sources.data.map((source) => {
            const fetching = fetchNow.isPending && fetchNow.variables === source.id;
            return (
              <li key={source.id} className="adm-card adm-source" data-testid="news-source">
                <div className="adm-source-head">
                  <div className="adm-source-name">
                    <strong>{source.name}</strong>
                    <div className="adm-meta">
                      <span className="adm-badge">{source.type === 'rss' ? 'RSS' : 'API (Future)'}</span>
                      <span>{source.section}</span>
                      <span className={`adm-badge ${source.enabled ? 'adm-badge-published' : 'adm-badge-archived'}`}>
                        {source.enabled ? 'Enabled' : 'Disabled'}
                      </span>
                    </div>
                  </div>
                  <SourceSwitch
                    source={source}
                    busy={toggle.isPending && toggle.variables?.id === source.id}
                    onToggle={(enabled, done) => toggle.mutate({ id: source.id, enabled }, { onSettled: done })}
                  />
                </div>
                <a className="adm-muted adm-break" href={source.url} target="_blank" rel="noopener noreferrer">
                  {source.url}
                </a>
                <SourceFetchStatus source={source} run={runs.get(source.id)} />
                <div className="adm-actions">
                  {source.type === 'rss' && source.enabled && (
                    <button
                      type="button"
                      className="adm-btn adm-btn-outline adm-btn-sm"
                      disabled={fetching}
                      onClick={() => fetchNow.mutate(source.id)}
                    >
                      {fetching ? 'Fetching...' : 'Fetch Now'}
                    </button>
                  )}
                  <button
                    type="button"
                    className="adm-btn adm-btn-danger adm-btn-sm"
                    disabled={remove.isPending && remove.variables === source.id}
                    onClick={() => {
                      if (confirmDelete(`the news source "${source.name}"`)) remove.mutate(source.id);
                    }}
                  >
                    Delete
                  </button>
                </div>
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}

type SourceSwitchProps = {
  source: NewsSource;
  busy: boolean;
  onToggle: (enabled: boolean, done: () => void) => void;
};

/** The enable/disable switch; it shows the new position at once and falls back to the server's answer. */
function SourceSwitch({ source, busy, onToggle }: SourceSwitchProps) {
  const [optimistic, setOptimistic] = useState<boolean | undefined>(undefined);
  return (
    <label className="adm-switch">
      <input
        type="checkbox"
        role="switch"
        checked={optimistic ?? source.enabled}
        disabled={busy}
        onChange={(e) => {
          setOptimistic(e.target.checked);
          onToggle(e.target.checked, () => setOptimistic(undefined));
        }}
        aria-label={`Enable ${source.name}`}
      />
      <span className="adm-switch-track" aria-hidden="true" />
    </label>
  );
}
