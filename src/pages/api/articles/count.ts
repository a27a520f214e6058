/** GET /api/articles/count: the count behind GET /api/articles for the same filters and visibility. */
import { allowMethods, endpoint, json, parseQuery, viewerOf } from '../../../api/http.ts';
import { articleListQuerySchema } from '../../../schemas/article.ts';
import { countArticles } from '../../../server/articles.ts';

export const GET = endpoint(async (context, runtime) => {
  // The list's schema, paging included, so both calls accept and refuse exactly the same queries.
  const query = parseQuery(context.url, articleListQuerySchema);
  return json({ count: await countArticles(runtime, query, viewerOf(context)) });
});

export const ALL = allowMethods({ GET });
