/**
 * GET /api/articles/{id} (readers: published only; answers `version` and an ETag), PUT (whole body or
 * a part; a stale If-Match or `version` answers 409 with the current article) and DELETE (204: the
 * article moves to the trash), as the role allows for this article.
 */
import {
  actorOf,
  allowMethods,
  authorizedEndpoint,
  endpoint,
  json,
  noContent,
  param,
  parseJsonBody,
  viewerOf,
} from '../../../../api/http.ts';
import { ifMatchVersion } from '../../../../api/if-match.ts';
import { articleUpdateSchema } from '../../../../schemas/article.ts';
import { deleteArticle, etagOf, getArticle, updateArticle } from '../../../../server/articles.ts';

export const GET = endpoint(async (context, runtime) => {
  const article = await getArticle(runtime, param(context, 'id'), viewerOf(context));
  return json(article, 200, { ETag: etagOf(article.version) });
});

export const PUT = authorizedEndpoint('article.edit', async (context, runtime, user) => {
  const expectedVersion = ifMatchVersion(context.request);
  const update = await parseJsonBody(context.request, articleUpdateSchema);
  const article = await updateArticle(runtime, param(context, 'id'), update, actorOf(user), { expectedVersion });
  return json(article, 200, { ETag: etagOf(article.version) });
});

export const DELETE = authorizedEndpoint('article.delete', async (context, runtime, user) => {
  await deleteArticle(runtime, param(context, 'id'), actorOf(user));
  return noContent();
});

export const ALL = allowMethods({ GET, PUT, DELETE });
