/** The analytics API's contract (issue 33): the queries it takes, the answers it gives, and the view buckets the stores keep. */
import { z } from './zod.ts';
import { idSchema, sectionSchema } from './common.ts';

/** How fine a stored bucket is: minutes (the last hour, for "reading now"), hours (14 days), newsroom days (2 years and more). */
export const VIEW_GRAINS = ['minute', 'hour', 'day'] as const;
export type ViewGrain = (typeof VIEW_GRAINS)[number];

/** What a bucket counts: a section (or `(front)`), an article id, a referrer (`section\tkind\thost`), a device (`section\tdevice`). */
export const VIEW_DIMENSIONS = ['section', 'article', 'referrer', 'device'] as const;
export type ViewDimension = (typeof VIEW_DIMENSIONS)[number];

/**
 * One stored count. `start` is `YYYY-MM-DD` (a newsroom day) for days, and for minutes and hours the
 * ISO instant the bucket starts at (hours start where the newsroom's hour starts, so a half-hour zone stays exact).
 */
export type ViewCount = { grain: ViewGrain; start: string; dim: ViewDimension; key: string; views: number };

export const viewCountSchema = z.object({
  grain: z.enum(VIEW_GRAINS),
  start: z.string().min(10).max(24),
  dim: z.enum(VIEW_DIMENSIONS),
  key: z.string().max(600),
  views: z.number().int().min(0),
});

export const REFERRER_KINDS = ['search', 'social', 'direct', 'newsletter', 'other'] as const;
export type ReferrerKind = (typeof REFERRER_KINDS)[number];
export const DEVICES = ['mobile', 'tablet', 'desktop'] as const;
export type Device = (typeof DEVICES)[number];
/** The section key of a view of the front page (`home` is an article section). */
export const FRONT_PAGE_KEY = '(front)';

/** The most days a query may span (two years and a leap day). */
export const MAX_RANGE_DAYS = 731;
const day = z.iso.date({ error: 'Expected a date YYYY-MM-DD' });

/** from/to (newsroom days, inclusive); checked for order and span in the domain, which knows today. */
const rangeQuery = { from: day.optional(), to: day.optional() };

export const summaryQuerySchema = z.object({ ...rangeQuery, section: sectionSchema.optional() });
export type SummaryQuery = z.infer<typeof summaryQuerySchema>;

export const TOP_PERIODS = ['today', '7d', '30d'] as const;
export const topQuerySchema = z.object({
  period: z.enum(TOP_PERIODS).default('today'),
  limit: z.coerce.number().int().min(1).max(50).default(10),
});
export type TopQuery = z.infer<typeof topQuerySchema>;

export const referrersQuerySchema = z.object({
  ...rangeQuery,
  section: sectionSchema.optional(),
  limit: z.coerce.number().int().min(1).max(100).default(10),
});
export type ReferrersQuery = z.infer<typeof referrersQuerySchema>;

export const articleAnalyticsQuerySchema = z.object({ ...rangeQuery, granularity: z.enum(['hour', 'day']).optional() });
export type ArticleAnalyticsQuery = z.infer<typeof articleAnalyticsQuerySchema>;

export const sparklinesQuerySchema = z.object({
  ids: z
    .string()
    .min(1)
    .transform((value) => [...new Set(value.split(',').filter((id) => id !== ''))])
    .pipe(z.array(idSchema).min(1).max(100, 'At most 100 ids')),
  days: z.coerce.number().int().min(1).max(90).default(14),
});
export type SparklinesQuery = z.infer<typeof sparklinesQuerySchema>;

export type AnalyticsSummary = {
  timeZone: string;
  from: string;
  to: string;
  section?: string;
  days: { day: string; views: number; sections: Record<string, number> }[];
  previous: { day: string; views: number }[];
  totals: { views: number; previousViews: number };
  readingNow: number;
  devices: Record<Device, number>;
  subscribers: { day: string; confirmed: number; unsubscribed: number }[];
  published: { day: string; editorial: number; feeds: Record<string, number> }[];
};

export type TopArticles = {
  period: (typeof TOP_PERIODS)[number];
  items: { id: string; title: string; slug: string; section: string; views: number; spark: number[] }[];
};

export type ReferrerReport = {
  from: string;
  to: string;
  kinds: Record<ReferrerKind, number>;
  items: { host: string; kind: ReferrerKind; views: number }[];
};

export type ArticleAnalytics = {
  id: string;
  title: string;
  publishedAt: string | undefined;
  granularity: 'hour' | 'day';
  points: { t: string; views: number }[];
  totals: { views: number; likes: number; dislikes: number; comments: number };
};

export type Sparklines = { days: number; items: Record<string, number[]> };
