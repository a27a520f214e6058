/**
 * GET /api/articles/{id}/live (roles that may edit the article): its live coverage and every update, newest first.
 * PUT: `{ status: 'live' | 'ended' }` starts or ends the coverage (roles that may publish it), `{ keyPoints }` pins its summary.
 */
import { actorOf, allowMethods, authorizedEndpoint, json, param, parseJsonBody } from '../../../../api/http.ts';
import { liveCoverageInputSchema } from '../../../../schemas/live.ts';
import { getLiveState, setLiveCoverage } from '../../../../server/live.ts';

export const GET = authorizedEndpoint('article.edit', async (context, runtime, user) =>
  json(await getLiveState(runtime, param(context, 'id'), actorOf(user))),
);

export const PUT = authorizedEndpoint('article.edit', async (context, runtime, user) => {
  const input = await parseJsonBody(context.request, liveCoverageInputSchema);
  return json(await setLiveCoverage(runtime, param(context, 'id'), input, actorOf(user)));
});

export const ALL = allowMethods({ GET, PUT });
