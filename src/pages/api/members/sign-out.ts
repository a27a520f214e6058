/** POST /api/members/sign-out: deletes the member's session on the server and clears its cookie (204 even when signed out). */
import { allowMethods, endpoint, expectEmptyBody, noContent } from '../../../api/http.ts';
import { deleteMemberSessionCookie } from '../../../api/cookies.ts';
import { invalidateMemberSession } from '../../../server/members/sessions.ts';

export const POST = endpoint(async (context, runtime) => {
  await expectEmptyBody(context.request);
  if (context.locals.memberSession) await invalidateMemberSession(runtime, context.locals.memberSession.id);
  deleteMemberSessionCookie(context.cookies, runtime.config);
  return noContent();
});

export const ALL = allowMethods({ POST });
