/** POST /api/trash/{id}/restore (admins and editors): puts the article back with its slug, status, comments and votes. */
import { actorOf, allowMethods, authorizedEndpoint, expectEmptyBody, json, param } from '../../../../api/http.ts';
import { etagOf } from '../../../../server/articles.ts';
import { restoreFromTrash } from '../../../../server/trash.ts';

export const POST = authorizedEndpoint('trash.manage', async (context, runtime, user) => {
  await expectEmptyBody(context.request);
  const article = await restoreFromTrash(runtime, param(context, 'id'), actorOf(user));
  return json(article, 200, { ETag: etagOf(article.version) });
});

export const ALL = allowMethods({ POST });
