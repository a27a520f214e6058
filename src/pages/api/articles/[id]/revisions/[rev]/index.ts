/** GET /api/articles/{id}/revisions/{rev} (roles that may read the article): one revision with the article as it was saved. */
import { actorOf, allowMethods, authorizedEndpoint, json, param, parseWith } from '../../../../../../api/http.ts';
import { assertArticleAccess } from '../../../../../../server/articles.ts';
import { revisionParamSchema } from '../../../../../../schemas/revision.ts';
import { getRevision } from '../../../../../../server/revisions.ts';

export const GET = authorizedEndpoint('article.read', async (context, runtime, user) => {
  await assertArticleAccess(runtime, param(context, 'id'), actorOf(user), 'article.read');
  const rev = parseWith(revisionParamSchema, param(context, 'rev'), 'Invalid revision');
  return json(await getRevision(runtime, param(context, 'id'), rev));
});

export const ALL = allowMethods({ GET });
