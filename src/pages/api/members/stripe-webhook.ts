/**
 * POST /api/members/stripe-webhook: Stripe's events, server to server (no cookie, no Origin). The body
 * is read as the exact bytes Stripe signed, under the JSON size limit; the signature is the only authority.
 */
import { readBodyBytes } from '../../../api/body-limit.ts';
import { MAX_JSON_BYTES, allowMethods, endpoint, json } from '../../../api/http.ts';
import { handleStripeWebhook } from '../../../server/members/stripe-events.ts';

export const POST = endpoint(async (context, runtime) => {
  const payload = await readBodyBytes(context.request, MAX_JSON_BYTES);
  const result = await handleStripeWebhook(runtime, payload, context.request.headers.get('stripe-signature'));
  // Stripe only needs a 2xx; the outcome helps whoever reads the delivery in Stripe's dashboard.
  return json({ received: true, outcome: result.outcome });
});

export const ALL = allowMethods({ POST });
