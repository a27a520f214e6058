/** GET /api/trash (admin): deleted articles that can still be restored, most recently deleted first. */
import { adminEndpoint, allowMethods, json } from '../../../api/http.ts';
import { listTrash } from '../../../server/trash.ts';

export const GET = adminEndpoint(async (_context, runtime) => json(await listTrash(runtime)));

export const ALL = allowMethods({ GET });
