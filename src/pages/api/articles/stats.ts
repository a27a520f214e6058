/** GET /api/articles/stats: totals per status for the admin overview. */
import { adminEndpoint, allowMethods, json } from '../../../api/http.ts';
import { getArticleStats } from '../../../server/articles.ts';

export const GET = adminEndpoint(async (_context, runtime) => json(await getArticleStats(runtime)));

export const ALL = allowMethods({ GET });
