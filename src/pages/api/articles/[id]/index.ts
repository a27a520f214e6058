/** GET /api/articles/{id} (readers: published only), PUT (whole body or a part) and DELETE (204), as the role allows for this article. */
import { actorOf, allowMethods, authorizedEndpoint, endpoint, json, noContent, param, parseJsonBody, viewerOf } from '../../../../api/http.ts';
import { articleUpdateSchema } from '../../../../schemas/article.ts';
import { deleteArticle, getArticle, updateArticle } from '../../../../server/articles.ts';

export const GET = endpoint(async (context, runtime) => json(await getArticle(runtime, param(context, 'id'), viewerOf(context))));

export const PUT = authorizedEndpoint('article.edit', async (context, runtime, user) => {
  const update = await parseJsonBody(context.request, articleUpdateSchema);
  return json(await updateArticle(runtime, param(context, 'id'), update, actorOf(user)));
});

export const DELETE = authorizedEndpoint('article.delete', async (context, runtime, user) => {
  await deleteArticle(runtime, param(context, 'id'), actorOf(user));
  return noContent();
});

export const ALL = allowMethods({ GET, PUT, DELETE });
