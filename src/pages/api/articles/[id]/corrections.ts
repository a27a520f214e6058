/** GET /api/articles/{id}/corrections (readers: published articles) and POST (admin, 201): append a correction. */
import { adminEndpoint, allowMethods, endpoint, json, param, parseJsonBody, viewerOf } from '../../../../api/http.ts';
import { ifMatchVersion } from '../../../../api/if-match.ts';
import { correctionInputSchema } from '../../../../schemas/article.ts';
import { getArticle } from '../../../../server/articles.ts';
import { addCorrection } from '../../../../server/corrections.ts';

export const GET = endpoint(async (context, runtime) => {
  const article = await getArticle(runtime, param(context, 'id'), viewerOf(context));
  return json(article.corrections ?? []);
});

export const POST = adminEndpoint(async (context, runtime, user) => {
  const expectedVersion = ifMatchVersion(context.request);
  const input = await parseJsonBody(context.request, correctionInputSchema);
  return json(await addCorrection(runtime, param(context, 'id'), input, { actor: user.username, expectedVersion }), 201);
});

export const ALL = allowMethods({ GET, POST });
