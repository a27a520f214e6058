/** Revisions and trash (issue 14): what every save keeps, and what a delete keeps for 30 days. */
import { z } from 'zod';
import { articleSchema } from './article.ts';

/** One save of an article: who, when, which fields changed, and the article as saved. */
export const revisionSchema = z.object({
  articleId: z.string(),
  /** Number of this revision: the article version it was first written at (unique per article). */
  rev: z.number().int().min(1),
  /** The article version this revision holds (later than `rev` when autosaves were coalesced into it). */
  version: z.number().int().min(1),
  /** When this revision was last written. */
  at: z.string(),
  /** When a coalesced autosave revision was first written (the coalescing window starts here). */
  startedAt: z.string().optional(),
  by: z.string(),
  fields: z.array(z.string()),
  autosave: z.boolean(),
  /** Set when this save restored an earlier revision. */
  restoredFrom: z.number().int().optional(),
  article: articleSchema,
});
export type Revision = z.infer<typeof revisionSchema>;
/** A revision as listed: without the article snapshot. */
export type RevisionSummary = Omit<Revision, 'article'>;

export const revisionParamSchema = z.coerce.number().int().min(1).max(1_000_000_000);

/** A deleted article, kept (with its comments and votes, which stay where they are) until purged. */
export const trashEntrySchema = z.object({
  article: articleSchema,
  deletedAt: z.string(),
  deletedBy: z.string(),
});
export type TrashEntry = z.infer<typeof trashEntrySchema>;

/** A trash entry as GET /api/trash lists it. */
export type TrashItem = {
  id: string;
  title: string;
  slug: string;
  section: string;
  status: string;
  deletedAt: string;
  deletedBy: string;
  /** When the server purges it for good. */
  purgeAt: string;
};
