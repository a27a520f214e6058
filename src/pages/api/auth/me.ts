/** GET /api/auth/me: the signed-in user, or 401 (the islands read 401 as "signed out"). */
import { allowMethods, endpoint, errorResponse, json } from '../../../api/http.ts';
import { toPublicUser } from '../../../server/auth.ts';

export const GET = endpoint((context) => {
  const user = context.locals.user;
  return user ? json({ user: toPublicUser(user) }) : errorResponse(401, 'Not signed in');
});

export const ALL = allowMethods({ GET });
