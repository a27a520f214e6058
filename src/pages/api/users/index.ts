/** GET /api/users (admins) and POST /api/users {username, role, password?} (201; the generated password once, when none was given). */
import { actorOf, allowMethods, authorizedEndpoint, json, parseJsonBody } from '../../../api/http.ts';
import { userCreateSchema } from '../../../schemas/auth.ts';
import { createUser, listUsers } from '../../../server/users.ts';

export const GET = authorizedEndpoint('user.manage', async (_context, runtime) => json({ items: await listUsers(runtime) }));

export const POST = authorizedEndpoint('user.manage', async (context, runtime, user) => {
  const input = await parseJsonBody(context.request, userCreateSchema);
  return json(await createUser(runtime, input, actorOf(user)), 201);
});

export const ALL = allowMethods({ GET, POST });
