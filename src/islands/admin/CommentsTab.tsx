/** Comments tab: search and status filter, 20 comments a page, hide/unhide and delete. */
import { useState, type FormEvent } from 'react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../lib/api-client.ts';
import type { Comment, CommentStatus } from '../../schemas/comment.ts';
import type { CountResponse } from '../../schemas/common.ts';
import { toast } from '../toast/toast-store.ts';
import { adminKeys, ADMIN_COMMENTS_PAGE_SIZE, invalidateComments } from './admin-queries.ts';
import { formatDateTime } from './admin-format.ts';
import { Pagination } from './Pagination.tsx';
import { confirmDelete, QueryFailure, SearchStatusFilter, Spinner, StatusBadge, toastFailure } from './AdminUi.tsx';

export function CommentsTab() {
  const client = useQueryClient();
  const [searchDraft, setSearchDraft] = useState('');
  const [search, setSearch] = useState('');
  const [status, setStatus] = useState<'' | CommentStatus>('');
  const [page, setPage] = useState(1);
  const filters = { search: search.trim(), status };

  const list = useQuery<Comment[]>({
    queryKey: adminKeys.comments({ ...filters, page, pageSize: ADMIN_COMMENTS_PAGE_SIZE }),
    placeholderData: keepPreviousData,
  });
  const count = useQuery<CountResponse>({ queryKey: adminKeys.commentCount(filters), placeholderData: keepPreviousData });
  const totalPages = count.data ? Math.ceil(count.data.count / ADMIN_COMMENTS_PAGE_SIZE) : 0;

  const moderate = useMutation({
    mutationFn: ({ id, status: next }: { id: string; status: CommentStatus }) =>
      api.put<Comment>(`/api/comments/${id}/status`, { status: next }),
    onSuccess: () => toast({ title: 'Comment updated' }),
    onError: (_error, { status: next }) =>
      toastFailure(next === 'hidden' ? 'Failed to hide comment. Please try again.' : 'Failed to unhide comment. Please try again.'),
    onSettled: () => invalidateComments(client),
  });
  const remove = useMutation({
    mutationFn: (id: string) => api.delete<void>(`/api/comments/${id}`),
    onSuccess: () => toast({ title: 'Comment deleted' }),
    onError: () => toastFailure('Failed to delete comment. Please try again.'),
    onSettled: () => invalidateComments(client),
  });

  const applySearch = (event: FormEvent) => {
    event.preventDefault();
    setSearch(searchDraft);
    setPage(1);
  };

  return (
    <div className="adm-stack">
      <SearchStatusFilter
        what="comments"
        placeholder="Author, email or text..."
        draft={searchDraft}
        onDraft={setSearchDraft}
        status={status}
        statuses={[
          ['visible', 'Visible'],
          ['hidden', 'Hidden'],
        ]}
        onStatus={(next) => {
          setStatus(next);
          setPage(1);
        }}
        onSubmit={applySearch}
      />

      <p className="adm-muted" aria-live="polite" data-testid="comment-count">
        {count.data ? `${count.data.count} ${count.data.count === 1 ? 'comment' : 'comments'}` : ''}
      </p>

      {list.isPending ? (
        <Spinner label="Loading comments" />
      ) : list.isError ? (
        <QueryFailure what="comments" onRetry={() => void list.refetch()} />
      ) : list.data.length === 0 ? (
        <p className="adm-empty">No comments found.</p>
      ) : (
        <ul className="adm-list">
          {list.data.map((comment) => {
            const busy =
              (moderate.isPending && moderate.variables?.id === comment.id) || (remove.isPending && remove.variables === comment.id);
            return (
              <li key={comment.id} className="adm-card adm-comment" data-testid="admin-comment">
                <div className="adm-comment-head">
                  <div className="adm-comment-who">
                    <strong>{comment.authorName}</strong>
                    <a href={`mailto:${comment.authorEmail}`} className="adm-muted adm-break">
                      {comment.authorEmail}
                    </a>
                  </div>
                  <div className="adm-meta">
                    <StatusBadge status={comment.status} />
                    <time dateTime={comment.createdAt}>{formatDateTime(comment.createdAt)}</time>
                  </div>
                </div>
                <p className="adm-comment-body">{comment.content}</p>
                <div className="adm-actions">
                  <button
                    type="button"
                    className="adm-btn adm-btn-outline adm-btn-sm"
                    disabled={busy}
                    onClick={() => moderate.mutate({ id: comment.id, status: comment.status === 'visible' ? 'hidden' : 'visible' })}
                  >
                    {comment.status === 'visible' ? 'Hide' : 'Unhide'}
                  </button>
                  <button
                    type="button"
                    className="adm-btn adm-btn-danger adm-btn-sm"
                    disabled={busy}
                    onClick={() => {
                      if (confirmDelete(`the comment by ${comment.authorName}`)) remove.mutate(comment.id);
                    }}
                  >
                    Delete
                  </button>
                  <a className="adm-btn adm-btn-ghost adm-btn-sm" href={`/admin/editor/${comment.articleId}`}>
                    Open article
                  </a>
                </div>
              </li>
            );
          })}
        </ul>
      )}

      <Pagination page={page} totalPages={totalPages} onChange={setPage} label="Comment pages" />
    </div>
  );
}
