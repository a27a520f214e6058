/** Trash tab (issue 14): deleted articles kept for 30 days, with Restore and Delete forever. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, serverMessageOf } from '../../lib/api-client.ts';
import type { Article } from '../../schemas/article.ts';
import type { TrashItem } from '../../schemas/revision.ts';
import { toast } from '../toast/toast-store.ts';
import { adminKeys, invalidateArticles } from './admin-queries.ts';
import { formatDateTime } from './admin-format.ts';
import { confirmDelete, QueryFailure, Spinner, StatusBadge, toastFailure } from './AdminUi.tsx';

export function TrashTab() {
  const client = useQueryClient();
  const trash = useQuery<TrashItem[]>({ queryKey: adminKeys.trash() });
  const refresh = () => Promise.all([client.invalidateQueries({ queryKey: adminKeys.trash() }), invalidateArticles(client)]);
  const restore = useMutation({
    mutationFn: (id: string) => api.post<Article>(`/api/trash/${id}/restore`),
    onSuccess: (article) => toast({ title: 'Article restored', description: `“${article.title}” is back, with its comments and votes.` }),
    onError: (error) => toastFailure(serverMessageOf(error, 'Failed to restore the article. Please try again.')),
    onSettled: refresh,
  });
  const purge = useMutation({
    mutationFn: (id: string) => api.delete<void>(`/api/trash/${id}`),
    onSuccess: () => toast({ title: 'Deleted forever', description: 'The article, its comments and votes are gone.' }),
    onError: (error) => toastFailure(serverMessageOf(error, 'Failed to delete the article. Please try again.')),
    onSettled: refresh,
  });

  if (trash.isPending) return <Spinner label="Loading the trash" />;
  if (trash.isError) return <QueryFailure what="the trash" onRetry={() => void trash.refetch()} />;
  return (
    <section className="adm-card adm-stack" aria-labelledby="trash-title">
      <h2 id="trash-title" className="adm-card-title">
        Trash
      </h2>
      <p className="adm-muted">Deleted articles stay here for 30 days, with their comments and votes, then are deleted for good.</p>
      {trash.data.length === 0 ? (
        <p className="adm-empty">The trash is empty.</p>
      ) : (
        <ul className="adm-list" data-testid="trash-list">
          {trash.data.map((item) => (
            <li key={item.id} className="adm-row" data-testid="trash-item">
              <div className="adm-row-main">
                <span className="adm-row-title">{item.title}</span>
                <div className="adm-muted">
                  <StatusBadge status={item.status} /> Deleted by {item.deletedBy} on{' '}
                  <time dateTime={item.deletedAt}>{formatDateTime(item.deletedAt)}</time>; purged on{' '}
                  <time dateTime={item.purgeAt}>{formatDateTime(item.purgeAt)}</time>
                </div>
              </div>
              <div className="adm-actions">
                <button
                  type="button"
                  className="adm-btn adm-btn-sm adm-btn-primary"
                  disabled={restore.isPending}
                  onClick={() => restore.mutate(item.id)}
                  aria-label={`Restore ${item.title}`}
                >
                  Restore
                </button>
                <button
                  type="button"
                  className="adm-btn adm-btn-sm adm-btn-danger"
                  disabled={purge.isPending}
                  onClick={() => confirmDelete(`"${item.title}" forever`) && purge.mutate(item.id)}
                  aria-label={`Delete ${item.title} forever`}
                >
                  Delete forever
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
