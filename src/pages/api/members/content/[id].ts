/** GET /api/members/content/{articleId}: the whole body of a published story for a member whose level allows it (200 | 401 | 403 | 404). */
import { allowMethods, endpoint, json, param, viewerOf } from '../../../../api/http.ts';
import { nowMs } from '../../../../server/clock.ts';
import { readGatedBody } from '../../../../server/members/content.ts';

export const GET = endpoint(async (context, runtime) => {
  const reader = { member: context.locals.member, staff: viewerOf(context).isAdmin };
  const body = await readGatedBody(runtime, param(context, 'id'), reader, nowMs());
  // Per reader: no shared cache may keep it, nor the browser's for the next person at the machine.
  return json(body, 200, { 'Cache-Control': 'private, no-store' });
});

export const ALL = allowMethods({ GET });
