/**
 * GET /api/articles/{id}/corrections (readers: published articles) and POST (roles that may publish the article, 201): append a correction.
 */
import { actorOf, allowMethods, authorizedEndpoint, endpoint, json, param, parseJsonBody, viewerOf } from '../../../../api/http.ts';
import { ifMatchVersion } from '../../../../api/if-match.ts';
import { correctionInputSchema } from '../../../../schemas/article.ts';
import { assertArticleAccess, getArticle } from '../../../../server/articles.ts';
import { addCorrection } from '../../../../server/corrections.ts';

export const GET = endpoint(async (context, runtime) => {
  const article = await getArticle(runtime, param(context, 'id'), viewerOf(context));
  return json(article.corrections ?? []);
});

export const POST = authorizedEndpoint('article.publish', async (context, runtime, user) => {
  await assertArticleAccess(runtime, param(context, 'id'), actorOf(user), 'article.publish');
  const expectedVersion = ifMatchVersion(context.request);
  const input = await parseJsonBody(context.request, correctionInputSchema);
  return json(await addCorrection(runtime, param(context, 'id'), input, { actor: user.username, expectedVersion }), 201);
});

export const ALL = allowMethods({ GET, POST });
