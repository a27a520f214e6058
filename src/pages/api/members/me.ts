/** GET /api/members/me: the signed-in member (401 when signed out); PATCH changes the profile; DELETE deletes the account. */
import { allowMethods, endpoint, json } from '../../../api/http.ts';
import { requireMember } from '../../../api/members.ts';
import { describeMember } from '../../../server/members/accounts.ts';

export const GET = endpoint(async (context, runtime) => json({ member: await describeMember(runtime, requireMember(context)) }));

export const ALL = allowMethods({ GET });
