/** GET /api/articles/stats: totals per status for the admin overview. */
import { authorizedEndpoint, allowMethods, json } from '../../../api/http.ts';
import { getArticleStats } from '../../../server/articles.ts';

export const GET = authorizedEndpoint('article.stats', async (_context, runtime) => json(await getArticleStats(runtime)));

export const ALL = allowMethods({ GET });
