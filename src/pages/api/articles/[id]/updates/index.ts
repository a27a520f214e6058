/**
 * GET /api/articles/{id}/updates (roles that may edit the article): its live updates, newest first.
 * POST (201): appends an update to its running live coverage; the article's version does not move.
 */
import { actorOf, allowMethods, authorizedEndpoint, json, param, parseJsonBody } from '../../../../../api/http.ts';
import { liveUpdateInputSchema } from '../../../../../schemas/live.ts';
import { addLiveUpdate, getLiveState } from '../../../../../server/live.ts';

export const GET = authorizedEndpoint('article.edit', async (context, runtime, user) =>
  json((await getLiveState(runtime, param(context, 'id'), actorOf(user))).updates),
);

export const POST = authorizedEndpoint('article.edit', async (context, runtime, user) => {
  const input = await parseJsonBody(context.request, liveUpdateInputSchema);
  return json(await addLiveUpdate(runtime, param(context, 'id'), input, actorOf(user)), 201);
});

export const ALL = allowMethods({ GET, POST });
