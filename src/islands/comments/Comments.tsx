/**
 * The comments section of an article: the public list, the comment form (a member comments under their own name; with members-only
 * comments a stranger gets a sign-in link instead), and hide/show/delete for signed-in admins.
 */
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, serverMessageOf } from '../../lib/api-client.ts';
import { withQueryClient } from '../../lib/query-client.tsx';
import type { CommentStatus, PublicComment } from '../../schemas/comment.ts';
import { toast } from '../toast/toast-store.ts';
import { usePermissions } from '../auth/use-permissions.ts';
import { RelativeTime } from '../shared/RelativeTime.tsx';
import { useCurrentMember } from '../members/use-current-member.ts';

type Draft = { authorName: string; authorEmail: string; content: string; website: string };
const EMPTY: Draft = { authorName: '', authorEmail: '', content: '', website: '' };

/**
 * The form's checks, in order (docs/product.md, Interface rules: forms); answers the toast to show, or undefined when the draft may be
 * sent.
 */
export function checkCommentDraft(draft: Draft, asMember = false): { title: string; description: string } | undefined {
  if (asMember) return draft.content.trim() ? undefined : { title: 'Missing fields', description: 'Please write your comment.' };
  if (!draft.authorName.trim() || !draft.authorEmail.trim() || !draft.content.trim()) {
    return { title: 'Missing fields', description: 'Please fill in all fields.' };
  }
  if (!draft.authorEmail.includes('@')) return { title: 'Invalid email', description: 'Please enter a valid email address.' };
  return undefined;
}

function Comments({ articleId }: { articleId: string }) {
  const queryClient = useQueryClient();
  const key = ['/api/articles', articleId, 'comments'];
  const { data: comments, isPending, isError } = useQuery<PublicComment[]>({ queryKey: key });
  // Moderation controls only for roles that moderate (issue 14); the server checks again.
  const { can } = usePermissions();
  const moderator = can('comment.moderate');
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const base = `/api/articles/${encodeURIComponent(articleId)}/comments`;
  // Issue 48: a signed-in member comments under their name; with members-only comments, strangers are sent to sign in.
  const { data: member } = useCurrentMember();
  const { data: policy } = useQuery<{ membersOnly: boolean }>({ queryKey: ['/api/members/comment-policy'] });
  const asMember = Boolean(member);

  const submit = useMutation({
    mutationFn: (input: Draft) =>
      api.post(
        base,
        asMember
          ? { content: input.content.trim(), ...(input.website ? { website: input.website } : {}) }
          : {
              authorName: input.authorName.trim(),
              authorEmail: input.authorEmail.trim(),
              content: input.content.trim(),
              ...(input.website ? { website: input.website } : {}),
            },
      ),
    onSuccess: async () => {
      setDraft(EMPTY);
      toast({ title: 'Comment submitted', description: 'Thank you for joining the conversation.' });
      await queryClient.invalidateQueries({ queryKey: key });
    },
    onError: (error) =>
      toast({ title: 'Failed to submit comment', description: serverMessageOf(error, 'Please try again later.'), variant: 'destructive' }),
  });
  const setStatus = useMutation({
    mutationFn: ({ id, status }: { id: string; status: CommentStatus }) =>
      api.put(`/api/comments/${encodeURIComponent(id)}/status`, { status }),
    onSuccess: async () => {
      toast({ title: 'Comment updated' });
      await queryClient.invalidateQueries({ queryKey: key });
    },
    onError: () => toast({ title: 'Error', description: 'Failed to update comment.', variant: 'destructive' }),
  });
  const remove = useMutation({
    mutationFn: (id: string) => api.delete(`/api/comments/${encodeURIComponent(id)}`),
    onSuccess: async () => {
      toast({ title: 'Comment deleted' });
      await queryClient.invalidateQueries({ queryKey: key });
    },
    onError: () => toast({ title: 'Error', description: 'Failed to delete comment.', variant: 'destructive' }),
  });

  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const problem = checkCommentDraft(draft, asMember);
    if (problem) {
      toast({ ...problem, variant: 'destructive' });
      return;
    }
    submit.mutate(draft);
  };
  const field = (name: keyof Draft) => ({
    value: draft[name],
    onChange: (event: { target: { value: string } }) => setDraft((d) => ({ ...d, [name]: event.target.value })),
    disabled: submit.isPending,
  });
  const count = comments?.length ?? 0;

  return (
    <section className="comments" aria-labelledby="comments-title" data-pagefind-ignore data-testid="comments">
      <h2 id="comments-title">Comments{comments ? <span className="comments-count"> ({count})</span> : null}</h2>
      {!member && policy?.membersOnly ? (
        <p className="comment-form comments-members-only" data-testid="comments-sign-in">
          Only members can comment on this article.{' '}
          <a href={`/account/sign-in?next=${encodeURIComponent(window.location.pathname)}`}>Sign in to comment</a>
        </p>
      ) : (
        <form className="comment-form" onSubmit={onSubmit} noValidate aria-label="Leave a comment">
          {member ? (
            <p className="comment-as" data-testid="comment-as">
              {member.name.trim() ? (
                <>
                  Commenting as <strong>{member.name}</strong>.
                </>
              ) : (
                <>
                  Add your name on <a href="/account">your account page</a> before you comment: it is shown with your comments.
                </>
              )}
            </p>
          ) : (
            <div className="comment-form-row">
              <div className="field">
                <label htmlFor="comment-name">Name</label>
                <input id="comment-name" className="input" name="authorName" autoComplete="name" maxLength={100} {...field('authorName')} />
              </div>
              <div className="field">
                <label htmlFor="comment-email">
                  Email <span className="hint">(never published)</span>
                </label>
                <input
                  id="comment-email"
                  className="input"
                  type="email"
                  name="authorEmail"
                  autoComplete="email"
                  maxLength={254}
                  {...field('authorEmail')}
                />
              </div>
            </div>
          )}
          <div className="field">
            <label htmlFor="comment-content">Comment</label>
            <textarea id="comment-content" className="input" name="content" rows={4} maxLength={5000} {...field('content')} />
          </div>
          {/* Honeypot: hidden from people and assistive technology, filled only by bots. */}
          <div className="hp" aria-hidden="true">
            <label htmlFor="comment-website">Website</label>
            <input id="comment-website" name="website" tabIndex={-1} autoComplete="off" {...field('website')} />
          </div>
          <button type="submit" className="btn btn-primary" disabled={submit.isPending}>
            {submit.isPending ? 'Posting…' : 'Post Comment'}
          </button>
        </form>
      )}

      {isPending && <p className="comments-status">Loading comments…</p>}
      {isError && <p className="comments-status">Comments could not be loaded. Please try again later.</p>}
      {comments && comments.length === 0 && <p className="comments-status">No comments yet. Be the first to share your thoughts.</p>}
      {comments && comments.length > 0 && (
        <ol className="comment-list">
          {comments.map((comment) => (
            <li key={comment.id} className={`comment${comment.status === 'hidden' ? ' comment-hidden' : ''}`} data-testid="comment">
              <div className="comment-head">
                <span className="comment-avatar" aria-hidden="true">
                  {comment.authorName.trim().charAt(0).toUpperCase() || '?'}
                </span>
                <strong className="comment-author">{comment.authorName}</strong>
                <RelativeTime iso={comment.createdAt} className="comment-time" />
                {comment.status === 'hidden' && <span className="badge badge-hidden">Hidden</span>}
              </div>
              <p className="comment-content">{comment.content}</p>
              {moderator && (
                <div className="comment-admin">
                  <button
                    type="button"
                    className="btn btn-sm"
                    disabled={setStatus.isPending}
                    onClick={() => setStatus.mutate({ id: comment.id, status: comment.status === 'hidden' ? 'visible' : 'hidden' })}
                  >
                    {comment.status === 'hidden' ? 'Show' : 'Hide'}
                  </button>
                  <button
                    type="button"
                    className="btn btn-sm btn-danger"
                    disabled={remove.isPending}
                    onClick={() => {
                      if (window.confirm('Delete this comment? This cannot be undone.')) remove.mutate(comment.id);
                    }}
                  >
                    Delete
                  </button>
                </div>
              )}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

export default withQueryClient(Comments);
