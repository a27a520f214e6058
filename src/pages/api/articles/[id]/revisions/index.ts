/** GET /api/articles/{id}/revisions (roles that may read the article): every save of the article, newest first, without snapshots. */
import { actorOf, allowMethods, authorizedEndpoint, json, param } from '../../../../../api/http.ts';
import { assertArticleAccess } from '../../../../../server/articles.ts';
import { listRevisions } from '../../../../../server/revisions.ts';

export const GET = authorizedEndpoint('article.read', async (context, runtime, user) => {
  await assertArticleAccess(runtime, param(context, 'id'), actorOf(user), 'article.read');
  return json(await listRevisions(runtime, param(context, 'id')));
});

export const ALL = allowMethods({ GET });
