/** GET /api/analytics/top?period=today|7d|30d&limit: the most read articles with their sparklines (an author: their own). */
import { allowMethods, authorizedEndpoint, json, parseQuery } from '../../../api/http.ts';
import { topQuerySchema } from '../../../schemas/analytics.ts';
import { topArticles } from '../../../server/analytics/reports.ts';

export const GET = authorizedEndpoint('analytics.read', async (context, runtime, user) =>
  json(await topArticles(runtime, user, parseQuery(context.url, topQuerySchema))),
);

export const ALL = allowMethods({ GET });
