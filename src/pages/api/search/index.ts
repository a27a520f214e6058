/** GET /api/search: published articles matching q, by relevance then recency, as card summaries. */
import { allowMethods, endpoint, json, parseQuery } from '../../../api/http.ts';
import { searchQuerySchema } from '../../../schemas/article.ts';
import { searchArticles } from '../../../server/articles.ts';

export const GET = endpoint(async (context, runtime) => {
  const query = parseQuery(context.url, searchQuerySchema);
  const { items } = await searchArticles(runtime, query);
  return json(items);
});

export const ALL = allowMethods({ GET });
