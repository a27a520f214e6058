/** PUT /api/users/{id} {role?, disabled?, resetPassword?} and DELETE /api/users/{id} (204): admins; never the last active admin. */
import { actorOf, allowMethods, authorizedEndpoint, json, noContent, param, parseJsonBody } from '../../../api/http.ts';
import { userUpdateSchema } from '../../../schemas/auth.ts';
import { deleteUser, updateUser } from '../../../server/users.ts';

export const PUT = authorizedEndpoint('user.manage', async (context, runtime, user) => {
  const change = await parseJsonBody(context.request, userUpdateSchema);
  return json(await updateUser(runtime, param(context, 'id'), change, actorOf(user)));
});

export const DELETE = authorizedEndpoint('user.manage', async (context, runtime, user) => {
  await deleteUser(runtime, param(context, 'id'), actorOf(user));
  return noContent();
});

export const ALL = allowMethods({ PUT, DELETE });
