import { endpoint, json, errorResponse } from '../../../api/http.ts';
import { toPublicUser } from '../../../server/auth.ts';

export const GET = endpoint((context) => {
  const user = context.locals.user;
  return user ? json({ user: toPublicUser(user) }) : errorResponse(401, 'Not signed in');
});
