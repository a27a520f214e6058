/**
 * POST /api/articles/{id}/revisions/{rev}/restore (roles that may edit the article): the revision's content as a new save; a stale If-Match
 * answers 409.
 */
import { actorOf, allowMethods, authorizedEndpoint, expectEmptyBody, json, param, parseWith } from '../../../../../../api/http.ts';
import { ifMatchVersion } from '../../../../../../api/if-match.ts';
import { revisionParamSchema } from '../../../../../../schemas/revision.ts';
import { assertArticleAccess, etagOf } from '../../../../../../server/articles.ts';
import { restoreRevision } from '../../../../../../server/revision-restore.ts';

export const POST = authorizedEndpoint('article.edit', async (context, runtime, user) => {
  await assertArticleAccess(runtime, param(context, 'id'), actorOf(user), 'article.edit');
  const rev = parseWith(revisionParamSchema, param(context, 'rev'), 'Invalid revision');
  const expectedVersion = ifMatchVersion(context.request);
  await expectEmptyBody(context.request);
  const article = await restoreRevision(runtime, param(context, 'id'), rev, { actor: actorOf(user), expectedVersion });
  return json(article, 200, { ETag: etagOf(article.version) });
});

export const ALL = allowMethods({ POST });
