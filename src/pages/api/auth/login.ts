/** POST /api/auth/login: checks credentials under the login throttle and sets a fresh session cookie. */
import { allowMethods, clientIp, endpoint, json, parseJsonBody } from '../../../api/http.ts';
import { setSessionCookie } from '../../../api/cookies.ts';
import { loginInputSchema } from '../../../schemas/auth.ts';
import { invalidateSession, logIn, toPublicUser } from '../../../server/auth.ts';

export const POST = endpoint(async (context, runtime) => {
  const credentials = await parseJsonBody(context.request, loginInputSchema);
  const { token, session, user } = await logIn(runtime, credentials, clientIp(context, runtime));
  // A new token at every sign-in: the old session (if any) is dropped, never reused.
  if (context.locals.session) await invalidateSession(runtime, context.locals.session.id);
  setSessionCookie(context.cookies, runtime.config, token, session.expiresAt);
  return json({ user: toPublicUser(user) });
});

export const ALL = allowMethods({ POST });
