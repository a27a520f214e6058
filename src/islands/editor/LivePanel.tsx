/**
 * The editor's live panel (issue 35): start and end an article's live coverage, pin its key points,
 * and post, edit or delete timestamped updates. Updates are saved on their own, never with the
 * article, so the editor's version (and anyone else's open editor) is left as it is.
 */
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../lib/api-client.ts';
import type { LiveCoverage, LiveState, LiveUpdate } from '../../schemas/live.ts';
import { formatUpdateTime } from '../../lib/live-blog.ts';
import { toast } from '../toast/toast-store.ts';
import { confirmDelete, QueryFailure, Spinner, toastFailure } from '../admin/AdminUi.tsx';
import { uploadHeroImage } from './image-upload.ts';
import { textToUpdateHtml } from './live-text.ts';

type Props = {
  articleId: string;
  /** Whether the article is published: readers see the coverage only then. */
  published: boolean;
  /** Starting and ending the coverage is a publishing decision. */
  mayPublish: boolean;
};

const liveKey = (articleId: string) => ['/api/articles', articleId, 'live'] as const;

/** The update form's fields. */
type Draft = { text: string; image: string; imageAlt: string; isBreaking: boolean };
const EMPTY_DRAFT: Draft = { text: '', image: '', imageAlt: '', isBreaking: false };

export function LivePanel({ articleId, published, mayPublish }: Props) {
  const client = useQueryClient();
  const state = useQuery<LiveState>({ queryKey: liveKey(articleId) });
  const refresh = () => client.invalidateQueries({ queryKey: liveKey(articleId) });
  const coverage = state.data?.coverage ?? null;
  const running = coverage !== null && !coverage.endedAt;

  const setCoverage = useMutation({
    mutationFn: (body: { status?: 'live' | 'ended'; keyPoints?: string[] }) =>
      api.put<LiveCoverage>(`/api/articles/${articleId}/live`, body),
    onSuccess: (_saved, body) => {
      void refresh();
      if (body.status === 'live')
        toast({ title: 'Live coverage started', description: 'Post updates below; readers see each within seconds.' });
      else if (body.status === 'ended')
        toast({ title: 'Live coverage ended', description: 'The page keeps its updates and stops asking for new ones.' });
      else toast({ title: 'Key points saved', description: 'They are pinned above the updates.' });
    },
    onError: (_error, body) =>
      toastFailure(
        body.status ? 'Failed to change the live coverage. Please try again.' : 'Failed to save the key points. Please try again.',
      ),
  });

  return (
    <section className="adm-card adm-form-stack adm-live" aria-labelledby="live-panel-heading" data-testid="live-panel">
      <h2 id="live-panel-heading" className="adm-card-title">
        Live coverage
      </h2>
      {state.isPending ? (
        <Spinner label="Loading the live coverage" />
      ) : state.isError ? (
        <QueryFailure what="the live coverage" onRetry={() => void state.refetch()} />
      ) : (
        <>
          <p className="adm-muted" data-testid="live-panel-status">
            {coverage === null
              ? 'Not live. A live article carries timestamped updates that readers see arrive without reloading.'
              : running
                ? `Live since ${formatUpdateTime(coverage.startedAt)} · ${state.data.updates.length} ${state.data.updates.length === 1 ? 'update' : 'updates'}`
                : `Ended ${formatUpdateTime(coverage.endedAt!)} · ${state.data.updates.length} ${state.data.updates.length === 1 ? 'update' : 'updates'}`}
            {coverage !== null && !published && ' · Readers see it once the article is published.'}
          </p>
          {mayPublish && (
            <div className="adm-actions">
              {running ? (
                <button
                  type="button"
                  className="adm-btn adm-btn-outline"
                  disabled={setCoverage.isPending}
                  onClick={() => {
                    if (window.confirm('End the live coverage? Readers’ pages stop asking for updates.'))
                      setCoverage.mutate({ status: 'ended' });
                  }}
                >
                  End live coverage
                </button>
              ) : (
                <button
                  type="button"
                  className="adm-btn adm-btn-primary"
                  disabled={setCoverage.isPending}
                  onClick={() => setCoverage.mutate({ status: 'live' })}
                >
                  {coverage === null ? 'Start live coverage' : 'Resume live coverage'}
                </button>
              )}
            </div>
          )}
          {coverage !== null && (
            <KeyPointsField
              key={coverage.updatedAt}
              points={coverage.keyPoints}
              pending={setCoverage.isPending}
              onSave={(keyPoints) => setCoverage.mutate({ keyPoints })}
            />
          )}
          {running && <UpdateForm articleId={articleId} onPosted={() => void refresh()} />}
          {state.data.updates.length > 0 && (
            <ol className="adm-list adm-live-updates" aria-label="Updates, newest first" data-testid="live-panel-updates">
              {state.data.updates.map((update) => (
                <UpdateRow
                  key={`${update.id}:${update.updatedAt}`}
                  articleId={articleId}
                  update={update}
                  onChanged={() => void refresh()}
                />
              ))}
            </ol>
          )}
        </>
      )}
    </section>
  );
}

function KeyPointsField({ points, pending, onSave }: { points: string[]; pending: boolean; onSave: (points: string[]) => void }) {
  const [text, setText] = useState(points.join('\n'));
  const next = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const changed = JSON.stringify(next) !== JSON.stringify(points);
  return (
    <form
      className="adm-form-stack"
      onSubmit={(event) => {
        event.preventDefault();
        if (changed) onSave(next);
      }}
    >
      <label className="adm-field">
        <span>Key points (one a line, up to 10)</span>
        <textarea rows={3} value={text} onChange={(e) => setText(e.target.value)} data-testid="live-key-points-input" />
      </label>
      <button type="submit" className="adm-btn adm-btn-outline" disabled={pending || !changed || next.length > 10}>
        Save key points
      </button>
    </form>
  );
}

/** The image part of an update: upload (the hero's path), its alt text, remove. */
function UpdateImage({ draft, setDraft }: { draft: Draft; setDraft: (change: Partial<Draft>) => void }) {
  const upload = useMutation({
    mutationFn: uploadHeroImage,
    onSuccess: (path) => {
      setDraft({ image: path });
      toast({ title: 'Image uploaded', description: 'It goes out with the update.' });
    },
    onError: () => toast({ title: 'Upload failed', description: 'Failed to upload image. Please try again.', variant: 'destructive' }),
  });
  if (draft.image)
    return (
      <div className="adm-form-stack">
        <img className="adm-live-image" src={draft.image} alt="The update's image, as readers will see it" width={320} height={180} />
        <label className="adm-field">
          <span>Image description (alt text)</span>
          <input type="text" value={draft.imageAlt} maxLength={300} onChange={(e) => setDraft({ imageAlt: e.target.value })} />
        </label>
        <button type="button" className="adm-btn adm-btn-outline adm-btn-sm" onClick={() => setDraft({ image: '', imageAlt: '' })}>
          Remove image
        </button>
      </div>
    );
  return (
    <label className={`adm-dropzone${upload.isPending ? ' adm-dropzone-busy' : ''}`}>
      <input
        type="file"
        accept="image/*"
        className="adm-sr-only"
        disabled={upload.isPending}
        data-testid="live-image-input"
        onChange={(event) => {
          const file = event.target.files?.[0];
          if (file) upload.mutate(file);
          event.target.value = '';
        }}
      />
      <span aria-live="polite">{upload.isPending ? 'Uploading...' : 'Add an image (optional)'}</span>
    </label>
  );
}

/** The fields of an update, for a new one and for an edit. */
function UpdateFields({ draft, setDraft, idPrefix }: { draft: Draft; setDraft: (change: Partial<Draft>) => void; idPrefix: string }) {
  return (
    <>
      <label className="adm-field">
        <span>Update (text, or HTML as in article bodies)</span>
        <textarea
          rows={4}
          value={draft.text}
          maxLength={50_000}
          onChange={(e) => setDraft({ text: e.target.value })}
          data-testid={`${idPrefix}-text`}
          required
          aria-required="true"
        />
      </label>
      <UpdateImage draft={draft} setDraft={setDraft} />
      <label className="adm-switch adm-switch-row">
        <span>Breaking</span>
        <input type="checkbox" role="switch" checked={draft.isBreaking} onChange={(e) => setDraft({ isBreaking: e.target.checked })} />
        <span className="adm-switch-track" aria-hidden="true" />
      </label>
    </>
  );
}

const bodyOf = (draft: Draft) => ({
  bodyHtml: textToUpdateHtml(draft.text),
  image: draft.image,
  imageAlt: draft.image ? draft.imageAlt : '',
  isBreaking: draft.isBreaking,
});

function UpdateForm({ articleId, onPosted }: { articleId: string; onPosted: () => void }) {
  const [draft, setDraftState] = useState<Draft>(EMPTY_DRAFT);
  const setDraft = (change: Partial<Draft>) => setDraftState((current) => ({ ...current, ...change }));
  const post = useMutation({
    mutationFn: (value: Draft) => api.post<LiveUpdate>(`/api/articles/${articleId}/updates`, bodyOf(value)),
    onSuccess: () => {
      setDraftState(EMPTY_DRAFT);
      onPosted();
      toast({ title: 'Update posted', description: 'Readers on the page see it within seconds.' });
    },
    onError: () => toastFailure('Failed to post the update. Please try again.'),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (draft.text.trim()) post.mutate(draft);
  };
  return (
    <form className="adm-form-stack adm-live-form" onSubmit={submit} aria-label="New update">
      <UpdateFields draft={draft} setDraft={setDraft} idPrefix="live-update" />
      <button type="submit" className="adm-btn adm-btn-primary" disabled={post.isPending || !draft.text.trim()} data-testid="live-post">
        Post update
      </button>
    </form>
  );
}

function UpdateRow({ articleId, update, onChanged }: { articleId: string; update: LiveUpdate; onChanged: () => void }) {
  const [editing, setEditing] = useState<Draft | undefined>();
  const path = `/api/articles/${articleId}/updates/${update.id}`;
  const save = useMutation({
    mutationFn: (value: Draft) => api.put<LiveUpdate>(path, bodyOf(value)),
    onSuccess: () => {
      setEditing(undefined);
      onChanged();
      toast({ title: 'Update saved', description: 'Readers see the change when the page is next loaded.' });
    },
    onError: () => toastFailure('Failed to save the update. Please try again.'),
  });
  const remove = useMutation({
    mutationFn: () => api.delete(path),
    onSuccess: () => {
      onChanged();
      toast({ title: 'Update deleted' });
    },
    onError: () => toastFailure('Failed to delete the update. Please try again.'),
  });
  if (editing)
    return (
      <li data-testid="live-panel-update">
        <form
          className="adm-form-stack"
          aria-label="Edit update"
          onSubmit={(event) => {
            event.preventDefault();
            if (editing.text.trim()) save.mutate(editing);
          }}
        >
          <UpdateFields
            draft={editing}
            setDraft={(change) => setEditing((current) => current && { ...current, ...change })}
            idPrefix="live-edit"
          />
          <div className="adm-actions">
            <button type="submit" className="adm-btn adm-btn-primary adm-btn-sm" disabled={save.isPending || !editing.text.trim()}>
              Save update
            </button>
            <button type="button" className="adm-btn adm-btn-outline adm-btn-sm" onClick={() => setEditing(undefined)}>
              Cancel
            </button>
          </div>
        </form>
      </li>
    );
  return (
    <li data-testid="live-panel-update">
      <p className="adm-meta">
        <time dateTime={update.createdAt}>{formatUpdateTime(update.createdAt)}</time>
        {update.isBreaking && <span className="adm-badge adm-badge-breaking">Breaking</span>}
        {update.by && <span>by {update.by}</span>}
      </p>
      <div className="adm-live-text" dangerouslySetInnerHTML={{ __html: update.bodyHtml }} />
      {update.image && <img className="adm-live-image" src={update.image} alt={update.imageAlt ?? ''} width={320} height={180} />}
      <div className="adm-actions">
        <button
          type="button"
          className="adm-btn adm-btn-outline adm-btn-sm"
          onClick={() =>
            setEditing({ text: update.bodyHtml, image: update.image ?? '', imageAlt: update.imageAlt ?? '', isBreaking: update.isBreaking })
          }
        >
          Edit<span className="adm-sr-only"> the update of {formatUpdateTime(update.createdAt)}</span>
        </button>
        <button
          type="button"
          className="adm-btn adm-btn-danger adm-btn-sm"
          disabled={remove.isPending}
          onClick={() => {
            if (confirmDelete('this update')) remove.mutate();
          }}
        >
          Delete<span className="adm-sr-only"> the update of {formatUpdateTime(update.createdAt)}</span>
        </button>
      </div>
    </li>
  );
}
