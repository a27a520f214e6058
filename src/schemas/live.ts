/** Live coverage (issue 35): an article's coverage state and key points, its timestamped updates, and what readers poll. */
import { z } from './zod.ts';
import { emptyToUndefined, idSchema } from './common.ts';
import { heroImageSchema } from './article.ts';

/** One timestamped update of a live article: a record of its own, never a new version of the article. */
export const liveUpdateSchema = z.object({
  id: idSchema,
  articleId: idSchema,
  /** Sanitised with the article bodies' allow-list. */
  bodyHtml: z.string(),
  image: z.string().optional(),
  imageAlt: z.string().optional(),
  isBreaking: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
  /** Username of the editor who posted it. */
  by: z.string().optional(),
});
export type LiveUpdate = z.infer<typeof liveUpdateSchema>;

/** An article's live coverage: when it started, when it ended (then the page is frozen), its pinned key points. */
export const liveCoverageSchema = z.object({
  articleId: idSchema,
  startedAt: z.string(),
  endedAt: z.string().optional(),
  keyPoints: z.array(z.string()),
  updatedAt: z.string(),
});
export type LiveCoverage = z.infer<typeof liveCoverageSchema>;

const keyPointsSchema = z.array(z.string().trim().min(1, 'A key point cannot be empty').max(300)).max(10, 'At most 10 key points');

/** PUT /api/articles/{id}/live: start or end the coverage, and/or replace the key points. */
export const liveCoverageInputSchema = z
  .strictObject({
    status: z.enum(['live', 'ended'], { error: 'Expected a status: live, ended' }).optional(),
    keyPoints: keyPointsSchema.optional(),
  })
  .refine((input) => input.status !== undefined || input.keyPoints !== undefined, 'Send a status or key points');
export type LiveCoverageInput = z.infer<typeof liveCoverageInputSchema>;

/** POST /api/articles/{id}/updates. */
export const liveUpdateInputSchema = z.strictObject({
  bodyHtml: z.string().trim().min(1, 'The update needs text').max(50_000),
  image: z.preprocess(emptyToUndefined, heroImageSchema.optional()),
  imageAlt: z.preprocess(emptyToUndefined, z.string().trim().max(300).optional()),
  isBreaking: z.boolean().default(false),
});
export type LiveUpdateInput = z.infer<typeof liveUpdateInputSchema>;

/** PUT /api/articles/{id}/updates/{updateId}: any part of it; an empty image removes it. */
export const liveUpdateEditSchema = z
  .strictObject({
    bodyHtml: z.string().trim().min(1, 'The update needs text').max(50_000).optional(),
    image: z.preprocess(emptyToUndefined, heroImageSchema.optional()),
    imageAlt: z.preprocess(emptyToUndefined, z.string().trim().max(300).optional()),
    isBreaking: z.boolean().optional(),
  })
  .refine((input) => Object.keys(input).length > 0, 'Send at least one field');
export type LiveUpdateEdit = z.infer<typeof liveUpdateEditSchema>;

/** What the editor's live panel reads (GET /api/articles/{id}/live): the coverage, if any, and every update, newest first. */
export type LiveState = { coverage: LiveCoverage | null; updates: LiveUpdate[] };

/** An update as readers get it, in the page and in live.json. */
export const liveFeedUpdateSchema = z.object({
  id: z.string(),
  at: z.string(),
  updatedAt: z.string(),
  html: z.string(),
  /** The update as plain text (structured data, feeds, announcements). */
  text: z.string(),
  image: z.string().optional(),
  imageAlt: z.string().optional(),
  isBreaking: z.boolean(),
});
export type LiveFeedUpdate = z.infer<typeof liveFeedUpdateSchema>;

/** The updates live.json carries (newest first): the island only needs the ones a reader has not got. */
export const LIVE_FEED_SIZE = 50;

/** /article/{slug}/live.json, which the reader's island polls; also what the article page's live block is drawn from. */
export const liveFeedSchema = z.object({
  status: z.enum(['live', 'ended']),
  startedAt: z.string(),
  endedAt: z.string().optional(),
  keyPoints: z.array(z.string()),
  /** Every update of the coverage. */
  total: z.number().int().min(0),
  updates: z.array(liveFeedUpdateSchema),
});
export type LiveFeed = z.infer<typeof liveFeedSchema>;
