/** GET /api/articles/{id}/revisions/{rev} (admin): one revision with the article as it was saved. */
import { adminEndpoint, allowMethods, json, param, parseWith } from '../../../../../../api/http.ts';
import { revisionParamSchema } from '../../../../../../schemas/revision.ts';
import { getRevision } from '../../../../../../server/revisions.ts';

export const GET = adminEndpoint(async (context, runtime) => {
  const rev = parseWith(revisionParamSchema, param(context, 'rev'), 'Invalid revision');
  return json(await getRevision(runtime, param(context, 'id'), rev));
});

export const ALL = allowMethods({ GET });
