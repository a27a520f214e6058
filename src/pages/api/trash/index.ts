/** GET /api/trash (admins and editors): deleted articles that can still be restored, most recently deleted first. */
import { allowMethods, authorizedEndpoint, json } from '../../../api/http.ts';
import { listTrash } from '../../../server/trash.ts';

export const GET = authorizedEndpoint('trash.manage', async (_context, runtime) => json(await listTrash(runtime)));

export const ALL = allowMethods({ GET });
