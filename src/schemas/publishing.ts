/** The dashboard's Publishing panel contract (issue 33): what GET /api/publishing answers and what a retry takes. */
import { z } from './zod.ts';

/** What a page job did to its file: `unchanged` also covers a missing page that had no file to remove. */
export const PAGE_OUTCOMES = ['written', 'deleted', 'unchanged'] as const;

export const renderingNowSchema = z.object({ path: z.string(), since: z.string() });
export type RenderingNow = z.infer<typeof renderingNowSchema>;

export const recentRenderSchema = z.object({
  path: z.string(),
  outcome: z.enum(PAGE_OUTCOMES),
  at: z.string(),
  ms: z.number(),
});
export type RecentRender = z.infer<typeof recentRenderSchema>;

export const failedRenderSchema = z.object({
  id: z.string(),
  /** A public URL path, or a search job's `/pagefind/...` path. */
  path: z.string(),
  attempts: z.number().int(),
  /** The last error's message, with this server's served folder cut from file paths. */
  error: z.string(),
  /** When this server tries it again by itself (absent: it has not failed here, or it is due now). */
  nextTryAt: z.string().optional(),
});
export type FailedRender = z.infer<typeof failedRenderSchema>;

export const SEARCH_STATES = ['idle', 'waiting', 'building'] as const;

export const publishingStatusSchema = z.object({
  /** Jobs queued that are neither rendering here now nor failed. */
  waiting: z.number().int(),
  renderingNow: z.array(renderingNowSchema),
  /** The last page jobs this server finished, newest first (per server, a bounded ring). */
  recent: z.array(recentRenderSchema),
  /** Failed jobs of the queue (the stored one, which every server shares, and this server's own search jobs). */
  failed: z.array(failedRenderSchema),
  search: z.object({
    state: z.enum(SEARCH_STATES),
    /** Search jobs queued (the stored queue's first 1,000 jobs and this server's own). */
    pending: z.number().int(),
    lastBuiltAt: z.string().optional(),
    lastMs: z.number().optional(),
  }),
  /** Pages a reconcile has still to check. */
  reconciling: z.number().int(),
  /** The running reconcile's size and the time it has left at its pace so far (absent: none runs, or no page is checked yet). */
  reconcile: z.object({ total: z.number().int(), secondsLeft: z.number().int().optional() }).optional(),
});
export type PublishingStatus = z.infer<typeof publishingStatusSchema>;

/** A job id as the stores and the worker make them: a number, or `local-<n>` for a server's own search job. */
const jobIdSchema = z.string().regex(/^(?:local-)?\d{1,18}$/, { error: 'Expected a job id' });

/** POST /api/publishing/retry: one failed job (`id`) or every failed job (`all: true`). */
export const publishingRetrySchema = z.union([z.strictObject({ id: jobIdSchema }), z.strictObject({ all: z.literal(true) })], {
  error: 'Expected { id } or { all: true }',
});
export type PublishingRetry = z.infer<typeof publishingRetrySchema>;

export const publishingRetryResultSchema = z.object({ retried: z.number().int(), message: z.string() });
export type PublishingRetryResult = z.infer<typeof publishingRetryResultSchema>;
