/** The editor's history (issue 14): every save with who, when and what changed, a body diff against the current version, and Restore. */
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../lib/api-client.ts';
import type { Article } from '../../schemas/article.ts';
import type { Revision, RevisionSummary } from '../../schemas/revision.ts';
import { formatDateTime } from '../admin/admin-format.ts';
import { QueryFailure, Spinner } from '../admin/AdminUi.tsx';
import { DiffView } from './DiffView.tsx';
import { ifMatch } from './editor-conflict.ts';

type Props = {
  articleId: string;
  /** The version the editor holds; a restore carries it, so it cannot overwrite someone else's save. */
  version: number;
  /** The current saved body, compared against. */
  currentBody: string;
  onRestored: (article: Article) => void;
  onRestoreFailed: (error: unknown) => void;
};

const FIELD_LABELS: Record<string, string> = {
  bodyHtml: 'body',
  dek: 'deck',
  heroImage: 'hero image',
  authorName: 'author',
  isBreaking: 'breaking',
  isEditorsPick: "editor's pick",
  scheduledFor: 'schedule',
  readingTime: 'reading time',
  access: 'access',
};

export const revisionsKey = (articleId: string) => ['/api/articles', articleId, 'revisions'] as const;

function describe(revision: RevisionSummary): string {
  if (revision.restoredFrom !== undefined) return `restored revision ${revision.restoredFrom}`;
  if (revision.fields.length === 0) return 'no field changed';
  return revision.fields.map((f) => FIELD_LABELS[f] ?? f).join(', ');
}

export function RevisionHistory({ articleId, version, currentBody, onRestored, onRestoreFailed }: Props) {
  const client = useQueryClient();
  const [selected, setSelected] = useState<number | undefined>();
  const list = useQuery<RevisionSummary[]>({
    queryKey: [...revisionsKey(articleId), version],
    queryFn: () => api.get(`/api/articles/${articleId}/revisions`),
  });
  const detail = useQuery<Revision>({
    queryKey: [...revisionsKey(articleId), 'rev', selected],
    queryFn: () => api.get(`/api/articles/${articleId}/revisions/${selected}`),
    enabled: selected !== undefined,
  });
  const restore = useMutation({
    mutationFn: (rev: number) =>
      api.post<Article>(`/api/articles/${articleId}/revisions/${rev}/restore`, undefined, { headers: ifMatch(version) }),
    onSuccess: (article) => {
      setSelected(undefined);
      onRestored(article);
      void client.invalidateQueries({ queryKey: revisionsKey(articleId) });
    },
    onError: onRestoreFailed,
  });

  return (
    <section className="adm-card adm-form-stack" aria-labelledby="history-heading" data-testid="revision-history">
      <h2 id="history-heading" className="adm-card-title">
        History
      </h2>
      {list.isPending && <Spinner label="Loading history" />}
      {list.isError && <QueryFailure what="the history" onRetry={() => void list.refetch()} />}
      {list.data && list.data.length === 0 && <p className="adm-muted">No saved revisions yet.</p>}
      {list.data && list.data.length > 0 && (
        <ol className="adm-list adm-revisions">
          {list.data.map((revision) => (
            <li key={revision.rev} className="adm-row" data-testid="revision">
              <div className="adm-row-main">
                <span className="adm-row-title">
                  Revision {revision.rev}
                  {revision.version === version ? ' (current)' : ''}
                  {revision.autosave ? ' · autosave' : ''}
                </span>
                <div className="adm-muted">
                  {revision.by}, <time dateTime={revision.at}>{formatDateTime(revision.at)}</time>: {describe(revision)}
                </div>
              </div>
              <button
                type="button"
                className="adm-btn adm-btn-sm adm-btn-outline"
                aria-expanded={selected === revision.rev}
                onClick={() => setSelected(selected === revision.rev ? undefined : revision.rev)}
              >
                {selected === revision.rev ? 'Close' : 'View'}
              </button>
            </li>
          ))}
        </ol>
      )}
      {selected !== undefined && detail.isPending && <Spinner label="Loading revision" />}
      {selected !== undefined && detail.data && detail.data.rev === selected && (
        <div className="adm-stack" data-testid="revision-detail">
          <p>
            Revision {selected}: “{detail.data.article.title}”, compared with the current version.
          </p>
          <DiffView
            before={detail.data.article.bodyHtml}
            after={currentBody}
            beforeLabel={`revision ${selected}`}
            afterLabel="current version"
          />
          <div className="adm-actions">
            <button type="button" className="adm-btn adm-btn-primary" disabled={restore.isPending} onClick={() => restore.mutate(selected)}>
              Restore revision {selected}
            </button>
          </div>
        </div>
      )}
    </section>
  );
}
