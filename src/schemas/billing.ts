/** Paid memberships (issue 48): what the plans, checkout and portal endpoints take and answer, for the API, the islands and the tests. */
import { z } from './zod.ts';
import { emptyToUndefined } from './common.ts';
import { billingIntervalSchema } from './member.ts';

/**
 * GET /api/members/plans: the plans as readers see them (prices in the currency's minor unit);
 * `available` = Stripe connected and prices made for these amounts. 404 while no plans are set.
 */
export type PublicPlans = { currency: string; monthly: number; yearly: number; available: boolean };

/** POST /api/members/checkout */
export const checkoutInputSchema = z.strictObject({
  interval: billingIntervalSchema,
  /** A path on this site to come back to after paying (the story behind the paywall). */
  next: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .max(500)
      .regex(/^\/(?!\/)[^\s\\]*$/, 'Expected a path on this site')
      .optional(),
  ),
});
export type CheckoutInput = z.infer<typeof checkoutInputSchema>;

/** POST /api/members/checkout and /api/members/portal: where to send the browser (Stripe's hosted page). */
export type RedirectAnswer = { url: string };
