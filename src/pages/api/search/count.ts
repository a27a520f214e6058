/** GET /api/search/count: how many published articles match q (for the search page's pagination). */
import { allowMethods, endpoint, json, parseQuery } from '../../../api/http.ts';
import { searchQuerySchema } from '../../../schemas/article.ts';
import { countSearchResults } from '../../../server/articles.ts';

export const GET = endpoint(async (context, runtime) => {
  const query = parseQuery(context.url, searchQuerySchema);
  return json({ count: await countSearchResults(runtime, query) });
});

export const ALL = allowMethods({ GET });
