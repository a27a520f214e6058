/** POST /api/members/portal: Stripe's Customer Portal for the signed-in member (card, plan, cancel) -> { url }. */
import { requireMember } from '../../../api/members.ts';
import { allowMethods, endpoint, expectEmptyBody, json } from '../../../api/http.ts';
import { openPortal } from '../../../server/members/billing.ts';

export const POST = endpoint(async (context, runtime) => {
  const member = requireMember(context);
  await expectEmptyBody(context.request);
  return json(await openPortal(runtime, member));
});

export const ALL = allowMethods({ POST });
