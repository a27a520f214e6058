/** The article contract: stored shape, editor input, list filters and public views. */
import { z } from './zod.ts';
import { emptyToUndefined, idSchema, isoDateOrDateTime, pagingQuerySchema, queryBoolean, SECTIONS, sectionSchema } from './common.ts';
import { accessSchema, type Access } from './member.ts';

export const ARTICLE_STATUSES = ['draft', 'scheduled', 'published', 'archived'] as const;
export const articleStatusSchema = z.enum(ARTICLE_STATUSES, {
  error: `Expected a status: ${ARTICLE_STATUSES.join(', ')}`,
});
export type ArticleStatus = z.infer<typeof articleStatusSchema>;

const httpUrl = z.url({ protocol: /^https?$/, error: 'Expected an http(s) URL' }).max(2048);
/** A hero image: a site path (/images/...) or an absolute http(s) URL. */
export const heroImageSchema = z.union([
  z
    .string()
    .max(2048)
    .regex(/^\/(?!\/)[A-Za-z0-9._~/-]+$/, 'Expected a site path or an http(s) URL')
    .refine((p) => !p.split('/').includes('..'), 'Path traversal is not allowed'),
  httpUrl,
]);

const tagSchema = z.string().trim().min(1).max(50);

/** Where an ingested article came from (kept for de-duplication, never shown). */
export const articleOriginSchema = z.object({
  sourceId: z.string(),
  guid: z.string(),
  canonicalUrl: z.string().optional(),
  /** Hash of the upstream item as last ingested: a new hash means the item was edited upstream. */
  fingerprint: z.string().optional(),
});

/** A correction an editor appended to a published article (issue 14): shown under the article and on /corrections. */
export const correctionSchema = z.object({
  id: z.string(),
  text: z.string(),
  at: z.string(),
  by: z.string().optional(),
});
export type Correction = z.infer<typeof correctionSchema>;

/** POST /api/articles/{id}/corrections. */
export const correctionInputSchema = z.strictObject({
  text: z.string().trim().min(1, 'Correction text is required').max(2000),
});
export type CorrectionInput = z.infer<typeof correctionInputSchema>;

export const articleSchema = z.object({
  id: idSchema,
  title: z.string(),
  slug: z.string(),
  dek: z.string().optional(),
  bodyHtml: z.string(),
  heroImage: z.string().optional(),
  section: sectionSchema,
  tags: z.array(z.string()),
  authorName: z.string(),
  sourceLabel: z.string().optional(),
  sourceUrl: z.string().optional(),
  publishedAt: z.string().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  scheduledFor: z.string().optional(),
  readingTime: z.number().int().min(1),
  isEditorsPick: z.boolean(),
  isBreaking: z.boolean(),
  status: articleStatusSchema,
  origin: articleOriginSchema.optional(),
  /**
   * The user who created it in the editor (issue 14). Absent on seeded, ingested and older articles: those belong to admins and editors
   * only.
   */
  createdBy: z.string().optional(),
  /** Bumped by the store on every write; records written before issue 14 have none and read as 1. */
  version: z.number().int().min(1).optional(),
  /** Appended corrections, oldest first. */
  corrections: z.array(correctionSchema).optional(),
  /** Who may read the whole body (issue 48); absent reads as 'public', so records stored before it need no change. */
  access: accessSchema.optional(),
});
/** An article as stored (without its counters). */
export type ArticleRecord = z.infer<typeof articleSchema>;

export const articleCountersSchema = z.object({
  likes: z.number().int().min(0),
  dislikes: z.number().int().min(0),
  views: z.number().int().min(0),
});
export type ArticleCounters = z.infer<typeof articleCountersSchema>;

/** An article as the API answers it: the record plus its counters, without internal fields; `version` is always set. */
export type Article = Omit<ArticleRecord, 'origin' | 'version' | 'access'> & ArticleCounters & { version: number; access: Access };

/** Fields the editor sends on create (POST /api/articles). */
export const articleInputSchema = z.strictObject({
  title: z.string().trim().min(1, 'Title is required').max(300),
  dek: z.preprocess(emptyToUndefined, z.string().trim().max(1000).optional()),
  bodyHtml: z.preprocess(emptyToUndefined, z.string().max(500_000).optional()),
  heroImage: z.preprocess(emptyToUndefined, heroImageSchema.optional()),
  section: sectionSchema.default('home'),
  tags: z
    .array(tagSchema)
    .max(30)
    .default([])
    .transform((tags) => [...new Set(tags)]),
  authorName: z.string().trim().max(100).default(''),
  sourceLabel: z.preprocess(emptyToUndefined, z.string().trim().max(100).optional()),
  sourceUrl: z.preprocess(emptyToUndefined, httpUrl.optional()),
  readingTime: z.number().int().min(1).max(600).optional(),
  isBreaking: z.boolean().default(false),
  isEditorsPick: z.boolean().default(false),
  status: articleStatusSchema.default('draft'),
  scheduledFor: z.preprocess(emptyToUndefined, z.iso.datetime({ offset: true }).optional()),
  /** Who may read the whole body (issue 48); absent is 'public' (an input built in code, such as a feed item's, may leave it out). */
  access: accessSchema.optional(),
});
export type ArticleInput = z.infer<typeof articleInputSchema>;

/** PUT /api/articles/{id}: the same body, or any part of it (e.g. just `status`). */
export const articleUpdateSchema = z.strictObject({
  title: z.string().trim().min(1, 'Title is required').max(300).optional(),
  dek: z.preprocess(emptyToUndefined, z.string().trim().max(1000).optional()),
  bodyHtml: z.string().max(500_000).optional(),
  heroImage: z.preprocess(emptyToUndefined, heroImageSchema.optional()),
  section: sectionSchema.optional(),
  tags: z
    .array(tagSchema)
    .max(30)
    .transform((tags) => [...new Set(tags)])
    .optional(),
  authorName: z.string().trim().max(100).optional(),
  sourceLabel: z.preprocess(emptyToUndefined, z.string().trim().max(100).optional()),
  sourceUrl: z.preprocess(emptyToUndefined, httpUrl.optional()),
  readingTime: z.number().int().min(1).max(600).optional(),
  isBreaking: z.boolean().optional(),
  isEditorsPick: z.boolean().optional(),
  status: articleStatusSchema.optional(),
  scheduledFor: z.preprocess(emptyToUndefined, z.iso.datetime({ offset: true }).nullable().optional()),
  access: accessSchema.optional(),
  /** The version the editor started from: a stale one answers 409 (same as an If-Match header). */
  version: z.number().int().min(1).optional(),
  /** Sent by the editor's autosave: consecutive autosaves by one user share one revision. */
  autosave: z.boolean().optional(),
});
export type ArticleUpdate = z.infer<typeof articleUpdateSchema>;

/** Query of GET /api/articles and /api/articles/count. */
export const articleListQuerySchema = pagingQuerySchema.extend({
  search: z.preprocess(emptyToUndefined, z.string().trim().max(200).optional()),
  section: z.preprocess(emptyToUndefined, sectionSchema.optional()),
  status: z.preprocess(emptyToUndefined, articleStatusSchema.optional()),
  source: z.preprocess(emptyToUndefined, z.string().trim().max(200).optional()),
  dateFrom: z.preprocess(emptyToUndefined, isoDateOrDateTime.optional()),
  dateTo: z.preprocess(emptyToUndefined, isoDateOrDateTime.optional()),
  isBreaking: z.preprocess(emptyToUndefined, queryBoolean.optional()),
});
export type ArticleListQuery = z.infer<typeof articleListQuerySchema>;

/** Filters the store understands (the API adds visibility on top). */
/**
 * The month (UTC, `YYYY-MM`) an article belongs to in the sitemaps and the search bundles: of its
 * publication, else of its last update. Stored dates are ISO strings in UTC, cut without parsing.
 */
export function articlePeriod(article: Pick<ArticleRecord, 'publishedAt' | 'updatedAt'>): string {
  const date = article.publishedAt ?? article.updatedAt;
  return /^\d{4}-\d{2}-\d{2}T[^+]*Z$/.test(date) ? date.slice(0, 7) : new Date(date).toISOString().slice(0, 7);
}

/** The publishedAt range (ISO, inclusive) of a month `YYYY-MM` (UTC), as the store's date filters take it. */
export function periodRange(period: string): { dateFrom: string; dateTo: string } {
  const [year, month] = period.split('-').map(Number) as [number, number];
  return { dateFrom: new Date(Date.UTC(year, month - 1, 1)).toISOString(), dateTo: new Date(Date.UTC(year, month, 1) - 1).toISOString() };
}

/** A month that has published articles: how many, and the newest `updatedAt` among them (the sitemap index's lastmod). */
export type ArticlePeriod = { period: string; lastmod: string; count: number };

export type ArticleFilter = {
  search?: string | undefined;
  section?: z.infer<typeof sectionSchema> | undefined;
  statuses?: readonly ArticleStatus[] | undefined;
  source?: string | undefined;
  dateFrom?: string | undefined;
  dateTo?: string | undefined;
  isBreaking?: boolean | undefined;
  isEditorsPick?: boolean | undefined;
  /** Only articles created by this user id (authors and contributors see their own). */
  createdBy?: string | undefined;
  /** Only articles with a tag of this slug (slugifyTerm, issue 35). */
  tag?: string | undefined;
  /** Only articles whose author name has this slug (slugifyTerm, issue 35). */
  author?: string | undefined;
};

/** A tag or author of published articles: its slug, the spelling of its newest article, and how many carry it. */
export type TermCount = { slug: string; name: string; count: number };

export const articleStatsSchema = z.object({
  totalArticles: z.number().int(),
  published: z.number().int(),
  drafts: z.number().int(),
  scheduled: z.number().int(),
  archived: z.number().int(),
});
export type ArticleStats = z.infer<typeof articleStatsSchema>;

/** POST /api/admin/articles/{id}/adjust-likes|adjust-dislikes */
export const adjustVotesSchema = z.strictObject({
  amount: z
    .number({ error: 'amount must be an integer' })
    .int('amount must be an integer')
    .refine((n) => n !== 0, 'amount must not be zero')
    .refine((n) => Math.abs(n) <= 1_000_000, 'amount is too large'),
});

export const voteKindSchema = z.enum(['like', 'dislike']);
export type VoteKind = z.infer<typeof voteKindSchema>;

export const voteResultSchema = z.object({
  likes: z.number().int(),
  dislikes: z.number().int(),
  vote: voteKindSchema.nullable(),
});
export type VoteResult = z.infer<typeof voteResultSchema>;

/** GET /api/search and /api/search/count */
export const searchQuerySchema = pagingQuerySchema.extend({
  q: z.string().trim().min(1, 'q is required').max(200),
  // One enum (not a union) so an unknown section such as `markets` gets a readable message.
  section: z.preprocess(
    emptyToUndefined,
    z
      .enum(['all', ...SECTIONS], {
        error: (issue) => `Unknown section "${String(issue.input)}"; expected all or one of ${SECTIONS.join(', ')}`,
      })
      .optional(),
  ),
});
export type SearchQuery = z.infer<typeof searchQuerySchema>;

/** The fields a search result (and an article card) carries. */
export type ArticleSummary = Pick<
  Article,
  | 'id'
  | 'slug'
  | 'title'
  | 'dek'
  | 'heroImage'
  | 'section'
  | 'sourceLabel'
  | 'sourceUrl'
  | 'publishedAt'
  | 'readingTime'
  | 'isBreaking'
  | 'isEditorsPick'
  | 'authorName'
>;
