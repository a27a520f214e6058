/** POST /api/auth/logout: deletes the session on the server and clears the cookie (204 even when signed out). */
import { allowMethods, endpoint, expectEmptyBody, noContent } from '../../../api/http.ts';
import { deleteSessionCookie } from '../../../api/cookies.ts';
import { logOut } from '../../../server/auth.ts';

export const POST = endpoint(async (context, runtime) => {
  await expectEmptyBody(context.request);
  if (context.locals.session) await logOut(runtime, context.locals.session, context.locals.user);
  deleteSessionCookie(context.cookies, runtime.config);
  return noContent();
});

export const ALL = allowMethods({ POST });
