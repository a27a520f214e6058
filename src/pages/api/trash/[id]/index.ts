/** DELETE /api/trash/{id} (admin, 204): purges a trashed article now, with its comments, votes and revisions. */
import { adminEndpoint, allowMethods, noContent, param } from '../../../../api/http.ts';
import { purgeTrashed } from '../../../../server/trash.ts';

export const DELETE = adminEndpoint(async (context, runtime) => {
  await purgeTrashed(runtime, param(context, 'id'));
  return noContent();
});

export const ALL = allowMethods({ DELETE });
