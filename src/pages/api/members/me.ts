/** GET /api/members/me: the signed-in member (401 when signed out); PATCH changes the profile; DELETE deletes the account. */
import { allowMethods, endpoint, expectEmptyBody, json, parseJsonBody } from '../../../api/http.ts';
import { requireMember } from '../../../api/members.ts';
import { deleteMemberSessionCookie } from '../../../api/cookies.ts';
import { memberProfileInputSchema } from '../../../schemas/member.ts';
import { deleteAccount, describeMember, updateProfile } from '../../../server/members/accounts.ts';

export const GET = endpoint(async (context, runtime) => json({ member: await describeMember(runtime, requireMember(context)) }));

export const PATCH = endpoint(async (context, runtime) => {
  const member = requireMember(context);
  const change = await parseJsonBody(context.request, memberProfileInputSchema);
  return json({ member: await updateProfile(runtime, member, change) });
});

/** 409 while a paid subscription still renews: the member cancels it in the Customer Portal first. */
export const DELETE = endpoint(async (context, runtime) => {
  const member = requireMember(context);
  await expectEmptyBody(context.request);
  const { comments } = await deleteAccount(runtime, member);
  deleteMemberSessionCookie(context.cookies, runtime.config);
  return json({ deleted: true, comments });
});

export const ALL = allowMethods({ GET, PATCH, DELETE });
