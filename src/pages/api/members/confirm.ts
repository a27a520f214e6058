/** GET /api/members/confirm?token=...: the mailed link; signs the member in and sends them on (303), or back when the link is spent. */
import { allowMethods, endpoint } from '../../../api/http.ts';
import { setMemberSessionCookie } from '../../../api/cookies.ts';
import { confirmSignInLink } from '../../../server/members/accounts.ts';
import { invalidateMemberSession } from '../../../server/members/sessions.ts';

function seeOther(location: string): Response {
  return new Response(null, { status: 303, headers: { Location: location, 'Cache-Control': 'no-store' } });
}

export const GET = endpoint(async (context, runtime) => {
  const result = await confirmSignInLink(runtime, context.url.searchParams.get('token') ?? '');
  if (result.kind === 'expired') return seeOther('/account/sign-in?error=expired');
  // A new session at every sign-in: one this browser already had (perhaps another member's) goes.
  if (context.locals.memberSession) await invalidateMemberSession(runtime, context.locals.memberSession.id);
  setMemberSessionCookie(context.cookies, runtime.config, result.token, result.session.expiresAt);
  return seeOther(result.next ?? '/account');
});

export const ALL = allowMethods({ GET });
