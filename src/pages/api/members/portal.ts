/** POST /api/members/portal: Stripe's Customer Portal for the signed-in member (card, plan, cancel) -> { url }. */
import { allowMethods, endpoint, expectEmptyBody, json } from '../../../api/http.ts';
import { unauthorized } from '../../../server/errors.ts';
import { openPortal } from '../../../server/members/billing.ts';

export const POST = endpoint(async (context, runtime) => {
  const member = context.locals.member;
  if (!member) throw unauthorized('Sign in to manage your billing');
  await expectEmptyBody(context.request);
  return json(await openPortal(runtime, member));
});

export const ALL = allowMethods({ POST });
