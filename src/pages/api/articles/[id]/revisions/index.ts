/** GET /api/articles/{id}/revisions (admin): every save of the article, newest first, without snapshots. */
import { adminEndpoint, allowMethods, json, param } from '../../../../../api/http.ts';
import { listRevisions } from '../../../../../server/revisions.ts';

export const GET = adminEndpoint(async (context, runtime) => json(await listRevisions(runtime, param(context, 'id'))));

export const ALL = allowMethods({ GET });
