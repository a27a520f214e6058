/** GET /api/members/plans: the membership plans for readers; PUT (admin): set them, making their Stripe prices. */
import { allowMethods, authorizedEndpoint, endpoint, json, parseJsonBody } from '../../../api/http.ts';
import { membershipPlansInputSchema } from '../../../schemas/member.ts';
import { getPublicPlans, savePlans } from '../../../server/members/billing.ts';

export const GET = endpoint(async (_context, runtime) => json(await getPublicPlans(runtime)));

// Only admins may set prices (user.manage is the admin-only action).
export const PUT = authorizedEndpoint('user.manage', async (context, runtime) => {
  const input = await parseJsonBody(context.request, membershipPlansInputSchema);
  return json(await savePlans(runtime, input));
});

export const ALL = allowMethods({ GET, PUT });
