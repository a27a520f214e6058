/** POST /api/members/{id}/comp {until?}: comp a paid subscription; DELETE: remove the comp (admins; both audited). */
import { actorOf, allowMethods, authorizedEndpoint, expectEmptyBody, json, param, parseJsonBody } from '../../../../api/http.ts';
import { memberCompInputSchema } from '../../../../schemas/member.ts';
import { grantComp, removeComp } from '../../../../server/members/admin.ts';

export const POST = authorizedEndpoint('member.manage', async (context, runtime, user) => {
  const input = await parseJsonBody(context.request, memberCompInputSchema);
  return json(await grantComp(runtime, param(context, 'id'), input, actorOf(user)));
});

export const DELETE = authorizedEndpoint('member.manage', async (context, runtime, user) => {
  await expectEmptyBody(context.request);
  return json(await removeComp(runtime, param(context, 'id'), actorOf(user)));
});

export const ALL = allowMethods({ POST, DELETE });
