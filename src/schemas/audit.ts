/** The audit log's entries (issue 14): who did what to which record, and when. */
import { z } from 'zod';
import { pagingQuerySchema } from './common.ts';

export const AUDIT_ACTIONS = [
  'article.publish',
  'article.unpublish',
  'article.schedule',
  'article.delete',
  'article.restore',
  'user.create',
  'user.role',
  'user.disable',
  'user.enable',
  'user.password-reset',
  'user.delete',
  'comment.hide',
  'comment.show',
  'comment.delete',
  'source.add',
  'source.remove',
  'tag.merge',
  'tag.hide',
  'tag.show',
  'live.start',
  'live.end',
  'live.key-points',
  'live.update.create',
  'live.update.edit',
  'live.update.delete',
  'member.comp-grant',
  'member.comp-remove',
] as const;
export const auditActionSchema = z.enum(AUDIT_ACTIONS);
export type AuditAction = z.infer<typeof auditActionSchema>;

export const auditEntrySchema = z.object({
  id: z.string(),
  at: z.string(),
  /** Who did it; null for the system (the scheduler publishing a scheduled article). */
  actor: z.object({ id: z.string(), username: z.string() }).nullable(),
  action: auditActionSchema,
  target: z.object({
    type: z.enum(['article', 'user', 'comment', 'source', 'tag', 'member']),
    id: z.string(),
    label: z.string().optional(),
  }),
  detail: z.string().optional(),
});
export type AuditEntry = z.infer<typeof auditEntrySchema>;

/** GET /api/audit */
export const auditListQuerySchema = pagingQuerySchema;
