/** GET /api/articles (filtered, paged; readers see published only) and POST /api/articles (roles that may create; 201). */
import { actorOf, allowMethods, authorizedEndpoint, endpoint, json, parseJsonBody, parseQuery, viewerOf } from '../../../api/http.ts';
import { articleInputSchema, articleListQuerySchema } from '../../../schemas/article.ts';
import { createArticle, etagOf, listArticles } from '../../../server/articles.ts';

export const GET = endpoint(async (context, runtime) => {
  const query = parseQuery(context.url, articleListQuerySchema);
  return json(await listArticles(runtime, query, viewerOf(context)));
});

export const POST = authorizedEndpoint('article.create', async (context, runtime, user) => {
  const input = await parseJsonBody(context.request, articleInputSchema);
  const article = await createArticle(runtime, input, actorOf(user));
  return json(article, 201, { ETag: etagOf(article.version) });
});

export const ALL = allowMethods({ GET, POST });
