/** Article mutations of the dashboard (status change, delete, vote adjustment) with their toasts and cache invalidation. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../lib/api-client.ts';
import type { Article, ArticleStatus, VoteKind } from '../../schemas/article.ts';
import { toast } from '../toast/toast-store.ts';
import { invalidateArticles } from './admin-queries.ts';
import { toastFailure } from './AdminUi.tsx';

export function useArticleActions() {
  const client = useQueryClient();

  const setStatus = useMutation({
    mutationFn: ({ id, status }: { id: string; status: ArticleStatus }) => api.put<Article>(`/api/articles/${id}`, { status }),
    onError: () => toastFailure('Failed to update article status.'),
    onSettled: () => invalidateArticles(client),
  });

  const remove = useMutation({
    mutationFn: (id: string) => api.delete<void>(`/api/articles/${id}`),
    onSuccess: () => toast({ title: 'Article deleted' }),
    onError: () => toastFailure('Failed to delete article.'),
    onSettled: () => invalidateArticles(client),
  });

  const adjust = useMutation({
    mutationFn: ({ id, kind, amount }: { id: string; kind: VoteKind; amount: number }) =>
      api.post(`/api/admin/articles/${id}/${kind === 'like' ? 'adjust-likes' : 'adjust-dislikes'}`, { amount }),
    onError: (_error, { kind }) => toastFailure(kind === 'like' ? 'Failed to adjust likes.' : 'Failed to adjust dislikes.'),
    onSettled: () => invalidateArticles(client),
  });

  return {
    setStatus,
    adjust,
    remove,
    /** Deletes after the browser's confirmation. */
    confirmAndDelete(article: Pick<Article, 'id' | 'title'>) {
      // A delete moves the article to the trash (issue 14), so the confirmation says it can be undone.
      if (window.confirm(`Delete "${article.title}"? It goes to the Trash, where it can be restored for 30 days.`))
        remove.mutate(article.id);
    },
  };
}
