/** The comment contract: stored shape, reader input, moderation and admin listing. */
import { z } from './zod.ts';
import { emptyToUndefined, idSchema, pagingQuerySchema } from './common.ts';

export const COMMENT_STATUSES = ['visible', 'hidden'] as const;
export const commentStatusSchema = z.enum(COMMENT_STATUSES, { error: 'Expected visible or hidden' });
export type CommentStatus = z.infer<typeof commentStatusSchema>;

export const commentSchema = z.object({
  id: idSchema,
  articleId: idSchema,
  authorName: z.string(),
  authorEmail: z.string(),
  content: z.string(),
  status: commentStatusSchema,
  createdAt: z.string(),
});
export type Comment = z.infer<typeof commentSchema>;

/** A comment as readers see it: no e-mail address. */
export type PublicComment = Omit<Comment, 'authorEmail'>;

export const commentInputSchema = z.strictObject({
  authorName: z.string().trim().min(1, 'Name is required').max(100, 'Name is at most 100 characters'),
  authorEmail: z
    .string()
    .trim()
    .min(3, 'Email is required')
    .max(254, 'Email is at most 254 characters')
    .regex(/^[^\s@]+@[^\s@]+$/, 'Please enter a valid email address.'),
  content: z.string().trim().min(1, 'Comment is required').max(5000, 'Comment is at most 5,000 characters'),
  /** Honeypot: people leave it empty, bots fill it. */
  website: z.string().max(500).optional(),
});
export type CommentInput = z.infer<typeof commentInputSchema>;

/**
 * A signed-in member's comment (issue 48): the text only; it carries the member's name and address. A
 * name or address typed anyway (a form that did not know who was signed in) is accepted and ignored.
 */
export const memberCommentInputSchema = commentInputSchema.extend({
  authorName: z.string().max(100).optional(),
  authorEmail: z.string().max(254).optional(),
});
export type MemberCommentInput = z.infer<typeof memberCommentInputSchema>;

export const commentStatusUpdateSchema = z.strictObject({ status: commentStatusSchema });

export const commentListQuerySchema = pagingQuerySchema.extend({
  pageSize: z.coerce.number().int().min(1).max(100).default(20),
  search: z.preprocess(emptyToUndefined, z.string().trim().max(200).optional()),
  status: z.preprocess(emptyToUndefined, commentStatusSchema.optional()),
});
export type CommentListQuery = z.infer<typeof commentListQuerySchema>;

export type CommentFilter = {
  articleId?: string | undefined;
  search?: string | undefined;
  status?: CommentStatus | undefined;
};
