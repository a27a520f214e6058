/** GET /api/members/plans: the membership plans for readers; PUT (admin): set them, making their Stripe prices. */
import { allowMethods, authorizedEndpoint, endpoint, json, parseJsonBody } from '../../../api/http.ts';
import { membershipPlansInputSchema } from '../../../schemas/member.ts';
import { getPublicPlans, savePlans } from '../../../server/members/billing.ts';

export const GET = endpoint(async (_context, runtime) => json(await getPublicPlans(runtime)));

// Setting what members pay is the admins' (member.manage); editors only read members.
export const PUT = authorizedEndpoint('member.manage', async (context, runtime) => {
  const input = await parseJsonBody(context.request, membershipPlansInputSchema);
  return json(await savePlans(runtime, input));
});

export const ALL = allowMethods({ GET, PUT });
