/** GET /api/auth/me: the signed-in user with their role and its permissions (the islands hide what it cannot do), or 401 ("signed out"). */
import { allowMethods, endpoint, errorResponse, json } from '../../../api/http.ts';
import { toPublicUser } from '../../../server/auth.ts';

export const GET = endpoint((context) => {
  const user = context.locals.user;
  return user ? json({ user: toPublicUser(user) }) : errorResponse(401, 'Not signed in');
});

export const ALL = allowMethods({ GET });
