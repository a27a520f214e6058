/** GET /api/articles/{id} (readers: published only), PUT (admin; whole body or a part) and DELETE (admin, 204). */
import { adminEndpoint, allowMethods, endpoint, json, noContent, param, parseJsonBody, viewerOf } from '../../../../api/http.ts';
import { articleUpdateSchema } from '../../../../schemas/article.ts';
import { deleteArticle, getArticle, updateArticle } from '../../../../server/articles.ts';

export const GET = endpoint(async (context, runtime) => json(await getArticle(runtime, param(context, 'id'), viewerOf(context))));

export const PUT = adminEndpoint(async (context, runtime) => {
  const update = await parseJsonBody(context.request, articleUpdateSchema);
  return json(await updateArticle(runtime, param(context, 'id'), update));
});

export const DELETE = adminEndpoint(async (context, runtime) => {
  await deleteArticle(runtime, param(context, 'id'));
  return noContent();
});

export const ALL = allowMethods({ GET, PUT, DELETE });
