import { endpoint, noContent } from '../../../api/http.ts';
import { deleteSessionCookie } from '../../../api/cookies.ts';
import { invalidateSession } from '../../../server/auth.ts';

export const POST = endpoint(async (context, runtime) => {
  if (context.locals.session) await invalidateSession(runtime, context.locals.session.id);
  deleteSessionCookie(context.cookies, runtime.config);
  return noContent();
});
