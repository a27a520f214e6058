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
