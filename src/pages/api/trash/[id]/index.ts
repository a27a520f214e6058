/** DELETE /api/trash/{id} (admins and editors, 204): purges a trashed article now, with its comments, votes and revisions. */
import { allowMethods, authorizedEndpoint, noContent, param } from '../../../../api/http.ts';
import { purgeTrashed } from '../../../../server/trash.ts';

export const DELETE = authorizedEndpoint('trash.manage', async (context, runtime) => {
  await purgeTrashed(runtime, param(context, 'id'));
  return noContent();
});

export const ALL = allowMethods({ DELETE });
