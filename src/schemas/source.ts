/** The news source contract: RSS feeds (and future API sources) an editor subscribes to. */
import { z } from './zod.ts';
import { idSchema, sectionSchema } from './common.ts';

export const SOURCE_TYPES = ['rss', 'api'] as const;
export const sourceTypeSchema = z.enum(SOURCE_TYPES, { error: 'Expected type rss or api' });

export const newsSourceSchema = z.object({
  id: idSchema,
  name: z.string(),
  type: sourceTypeSchema,
  url: z.string(),
  section: sectionSchema,
  enabled: z.boolean(),
  createdAt: z.string(),
  lastFetchedAt: z.string().optional(),
  lastError: z.string().optional(),
  /** The last fetch's outcome in words ('Fetched 12 items: 9 new, 1 updated, 2 skipped, 0 refused'), failed or not. */
  lastResult: z.string().optional(),
  /** When the failures in a row began (the first failed fetch after a success); absent while the source works. */
  failingSince: z.string().optional(),
  /** Validators of the last successful fetch, sent back as If-None-Match / If-Modified-Since. */
  etag: z.string().optional(),
  lastModified: z.string().optional(),
  /** Earliest time of the next fetch after a 429/503 with Retry-After. */
  retryAfter: z.string().optional(),
});
export type NewsSource = z.infer<typeof newsSourceSchema>;

export const newsSourceInputSchema = z.strictObject({
  name: z.string().trim().min(1, 'Name is required').max(100),
  type: sourceTypeSchema.default('rss'),
  url: z.url({ protocol: /^https?$/, error: 'Expected an http(s) URL' }).max(2048),
  section: sectionSchema,
  enabled: z.boolean().default(true),
});
export type NewsSourceInput = z.infer<typeof newsSourceInputSchema>;

export const newsSourceUpdateSchema = z.strictObject({ enabled: z.boolean() });

/** A fetch's progress, live while it runs and kept after it ends (GET /api/news-sources/progress). */
export const fetchProgressSchema = z.object({
  sourceId: idSchema,
  state: z.enum(['running', 'done', 'failed']),
  phase: z.enum(['downloading', 'reading', 'writing', 'done']),
  startedAt: z.string(),
  finishedAt: z.string().optional(),
  /** Items read from the feed, then what became of each: new, updated, skipped (unchanged or a duplicate), refused (unusable). */
  read: z.number().int(),
  created: z.number().int(),
  updated: z.number().int(),
  skipped: z.number().int(),
  refused: z.number().int(),
  message: z.string().optional(),
  error: z.string().optional(),
});
export type FetchProgress = z.infer<typeof fetchProgressSchema>;
