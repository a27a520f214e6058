/** POST /api/members/checkout { interval, next? }: a Stripe Checkout for the signed-in member -> { url } of Stripe's payment page. */
import { requireMember } from '../../../api/members.ts';
import { allowMethods, endpoint, json, parseJsonBody } from '../../../api/http.ts';
import { checkoutInputSchema } from '../../../schemas/billing.ts';
import { startCheckout } from '../../../server/members/billing.ts';

export const POST = endpoint(async (context, runtime) => {
  const member = requireMember(context);
  const input = await parseJsonBody(context.request, checkoutInputSchema);
  return json(await startCheckout(runtime, member, input));
});

export const ALL = allowMethods({ POST });
