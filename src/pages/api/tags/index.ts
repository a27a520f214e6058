/** GET /api/tags (admins, editors): every tag of published articles with its count and whether it is hidden, and the merges in force. */
import { actorOf, allowMethods, authorizedEndpoint, json } from '../../../api/http.ts';
import { listTags } from '../../../server/tags.ts';

export const GET = authorizedEndpoint('tag.manage', async (_context, runtime, user) => json(await listTags(runtime, actorOf(user))));

export const ALL = allowMethods({ GET });
