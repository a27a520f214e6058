/** The HTTP edge of members' own calls (issue 48): the signed-in member, or a 401 that says how to sign in. */
import type { APIContext } from 'astro';
import type { Member } from '../schemas/member.ts';
import { unauthorized } from '../server/errors.ts';

/** The member the middleware found behind the member_session cookie; throws 401 without one. */
export function requireMember(context: APIContext): Member {
  const member = context.locals.member;
  if (!member || !context.locals.memberSession) throw unauthorized('Sign in to your account first.');
  return member;
}
