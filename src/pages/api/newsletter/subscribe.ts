/** POST /api/newsletter/subscribe: idempotent sign-up, rate limited per IP. */
import { allowMethods, clientIp, endpoint, json, parseJsonBody } from '../../../api/http.ts';
import { subscribeInputSchema } from '../../../schemas/newsletter.ts';
import { subscribe } from '../../../server/newsletter.ts';
import { RATE_LIMITS, consumeRateLimit } from '../../../server/rate-limit.ts';

export const POST = endpoint(async (context, runtime) => {
  await consumeRateLimit(runtime, RATE_LIMITS.newsletter, clientIp(context, runtime));
  const { email } = await parseJsonBody(context.request, subscribeInputSchema);
  await subscribe(runtime, email);
  // Same answer whether or not the address was already subscribed: it reveals nothing about the list.
  return json({ message: 'Subscribed' });
});

export const ALL = allowMethods({ POST });
