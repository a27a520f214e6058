/** POST /api/newsletter/subscribe: double opt-in sign-up (a confirmation mail), rate limited per IP. */
import { allowMethods, clientIp, endpoint, json, parseJsonBody } from '../../../api/http.ts';
import { subscribeInputSchema } from '../../../schemas/newsletter.ts';
import { subscribe } from '../../../server/newsletter.ts';
import { RATE_LIMITS, consumeRateLimit } from '../../../server/rate-limit.ts';

export const POST = endpoint(async (context, runtime) => {
  const ip = clientIp(context, runtime);
  await consumeRateLimit(runtime, RATE_LIMITS.newsletter, ip);
  const { email } = await parseJsonBody(context.request, subscribeInputSchema);
  await subscribe(runtime, email, ip);
  // Same answer whether the address is new, pending or already confirmed: it reveals nothing about the list.
  return json({ message: 'Subscribed' });
});

export const ALL = allowMethods({ POST });
