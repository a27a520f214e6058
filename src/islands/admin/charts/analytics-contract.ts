/** The dashboard's analytics queries: the keys of /api/analytics/* and the answers' types, from the API's schema module. */
import type {
  AnalyticsSummary,
  ArticleAnalytics,
  ReferrerKind,
  ReferrerReport,
  Sparklines,
  TopArticles,
  TOP_PERIODS,
} from '../../../schemas/analytics.ts';

export type { AnalyticsSummary, ReferrerKind };
export type AnalyticsTop = TopArticles;
export type AnalyticsReferrers = ReferrerReport;
export type AnalyticsArticle = ArticleAnalytics;
export type AnalyticsSparklines = Sparklines;
export type TopPeriod = (typeof TOP_PERIODS)[number];
type Day = string;

export const analyticsKeys = {
  summary: (from: Day, to: Day) => ['/api/analytics/summary', { from, to }] as const,
  top: (period: TopPeriod) => ['/api/analytics/top', { period, limit: 10 }] as const,
  referrers: (from: Day, to: Day) => ['/api/analytics/referrers', { from, to, limit: 10 }] as const,
  article: (id: string) => ['/api/analytics/articles', id] as const,
  sparklines: (ids: string[], days: number) => ['/api/analytics/sparklines', { ids: ids.join(','), days }] as const,
};
