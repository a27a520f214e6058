/** GET /api/analytics/articles/{id}?from&to&granularity=hour|day: one article's views over time and its totals. */
import { allowMethods, authorizedEndpoint, json, param, parseQuery } from '../../../../api/http.ts';
import { articleAnalyticsQuerySchema } from '../../../../schemas/analytics.ts';
import { articleAnalytics } from '../../../../server/analytics/reports.ts';

export const GET = authorizedEndpoint('analytics.read', async (context, runtime, user) =>
  json(await articleAnalytics(runtime, user, param(context, 'id'), parseQuery(context.url, articleAnalyticsQuerySchema))),
);

export const ALL = allowMethods({ GET });
