/**
 * The answers of /api/analytics/* the dashboard reads, as issue 33's shared contract states them.
 * TODO(issue 33): infer these from the analytics zod schemas once the API branch (h-analytics) lands.
 */

export type Day = string;

export type AnalyticsSummary = {
  timeZone: string;
  from: Day;
  to: Day;
  section?: string;
  days: { day: Day; views: number; sections: Record<string, number> }[];
  previous: { day: Day; views: number }[];
  totals: { views: number; previousViews: number };
  readingNow: number;
  devices: { mobile: number; tablet: number; desktop: number };
  subscribers: { day: Day; confirmed: number; unsubscribed: number }[];
  published: { day: Day; editorial: number; feeds: Record<string, number> }[];
};

export type TopPeriod = 'today' | '7d' | '30d';
export type AnalyticsTop = {
  period: TopPeriod;
  items: { id: string; title: string; slug: string; section: string; views: number; spark: number[] }[];
};

export type ReferrerKind = 'search' | 'social' | 'direct' | 'newsletter' | 'other';
export type AnalyticsReferrers = {
  from: Day;
  to: Day;
  kinds: Record<ReferrerKind, number>;
  items: { host: string; kind: ReferrerKind; views: number }[];
};

export type AnalyticsArticle = {
  id: string;
  title: string;
  publishedAt?: string;
  granularity: 'hour' | 'day';
  points: { t: string; views: number }[];
  totals: { views: number; likes: number; dislikes: number; comments: number };
};

export type AnalyticsSparklines = { days: number; items: Record<string, number[]> };

export const analyticsKeys = {
  summary: (from: Day, to: Day) => ['/api/analytics/summary', { from, to }] as const,
  top: (period: TopPeriod) => ['/api/analytics/top', { period, limit: 10 }] as const,
  referrers: (from: Day, to: Day) => ['/api/analytics/referrers', { from, to, limit: 10 }] as const,
  article: (id: string) => ['/api/analytics/articles', id] as const,
  sparklines: (ids: string[], days: number) => ['/api/analytics/sparklines', { ids: ids.join(','), days }] as const,
};
