/** Comments: post-moderated, plain text, newest first; admins see and moderate hidden ones. */
import { randomUUID } from 'node:crypto';
import type { Comment, CommentInput, CommentListQuery, MemberCommentInput, PublicComment } from '../schemas/comment.ts';
import type { Member } from '../schemas/member.ts';
import type { Runtime } from './runtime.ts';
import type { Viewer } from './articles.ts';
import { badRequest, notFound, unauthorized } from './errors.ts';
import { nowIso } from './clock.ts';
import { recordAudit, type AuditActor } from './audit.ts';
import { getMemberSettings } from './members/settings.ts';

export function toPublicComment(comment: Comment): PublicComment {
  const { authorEmail: _private, ...rest } = comment;
  return rest;
}

const MAX_THREAD = 500;

/** Comments of a published article: visible ones for readers, all (with e-mail) for admins. */
export async function listArticleComments(runtime: Runtime, articleId: string, viewer: Viewer): Promise<PublicComment[] | Comment[]> {
  const article = await runtime.store.articles.get(articleId);
  if (!article || (!viewer.isAdmin && article.status !== 'published')) throw notFound('Article');
  const comments = await runtime.store.comments.list(
    { articleId, status: viewer.isAdmin ? undefined : 'visible' },
    { offset: 0, limit: MAX_THREAD },
  );
  return viewer.isAdmin ? comments : comments.map(toPublicComment);
}

/** Adds a visible comment; a filled honeypot is accepted silently and dropped. */
export async function addComment(runtime: Runtime, articleId: string, input: CommentInput): Promise<PublicComment> {
  const article = await runtime.store.articles.get(articleId);
  if (!article || article.status !== 'published') throw notFound('Article');
  const comment: Comment = {
    id: randomUUID(),
    articleId,
    authorName: input.authorName,
    authorEmail: input.authorEmail,
    content: input.content,
    status: 'visible',
    createdAt: nowIso(),
  };
  if (input.website && input.website.trim() !== '') return toPublicComment(comment);
  await runtime.store.comments.insert(comment);
  return toPublicComment(comment);
}

export const MEMBERS_ONLY_REFUSAL = 'Only members can comment. Sign in to your account to join the conversation.';

/** Throws 401 when commenting is for members only (issue 48) and the caller is not one. */
export async function assertMayCommentAnonymously(runtime: Runtime): Promise<void> {
  if ((await getMemberSettings(runtime)).commentsMembersOnly) throw unauthorized(MEMBERS_ONLY_REFUSAL);
}

/** A signed-in member's comment: their name and address, never typed ones. */
export async function addMemberComment(
  runtime: Runtime,
  articleId: string,
  member: Member,
  input: MemberCommentInput,
): Promise<PublicComment> {
  const name = member.name.trim();
  if (!name) throw badRequest('Add your name on your account page (/account) before you comment: it is shown with your comments.');
  return addComment(runtime, articleId, { authorName: name, authorEmail: member.email, content: input.content, website: input.website });
}

/** Hides or shows a comment; with an actor, a change is written to the audit log. */
export async function setCommentStatus(runtime: Runtime, id: string, status: Comment['status'], actor?: AuditActor): Promise<Comment> {
  // Read before the write: the store may hand out the record it then changes in place.
  const previous = (await runtime.store.comments.get(id))?.status;
  const updated = await runtime.store.comments.setStatus(id, status);
  if (!updated) throw notFound('Comment');
  if (actor !== undefined && previous !== status) {
    await recordAudit(runtime, {
      actor,
      action: status === 'hidden' ? 'comment.hide' : 'comment.show',
      target: { type: 'comment', id, label: updated.authorName },
      detail: `on article ${updated.articleId}`,
    });
  }
  return updated;
}

export async function deleteComment(runtime: Runtime, id: string, actor?: AuditActor): Promise<void> {
  const before = await runtime.store.comments.get(id);
  if (!(await runtime.store.comments.delete(id))) throw notFound('Comment');
  if (actor !== undefined)
    await recordAudit(runtime, {
      actor,
      action: 'comment.delete',
      target: { type: 'comment', id, label: before?.authorName },
      detail: before ? `on article ${before.articleId}` : undefined,
    });
}

export async function listComments(runtime: Runtime, query: CommentListQuery): Promise<Comment[]> {
  const page =
    query.limit !== undefined ? { offset: 0, limit: query.limit } : { offset: (query.page - 1) * query.pageSize, limit: query.pageSize };
  return runtime.store.comments.list({ search: query.search, status: query.status }, page);
}

export async function countComments(runtime: Runtime, query: Pick<CommentListQuery, 'search' | 'status'>): Promise<number> {
  return runtime.store.comments.count({ search: query.search, status: query.status });
}
