/** POST /api/members/sign-in: mails a one-time sign-in link (a sign-up for a new address); the same 200 for a known or new address. */
import { allowMethods, clientIp, endpoint, json, parseJsonBody } from '../../../api/http.ts';
import { memberSignInInputSchema } from '../../../schemas/member.ts';
import { requestSignInLink } from '../../../server/members/accounts.ts';
import { RATE_LIMITS, consumeRateLimit } from '../../../server/rate-limit.ts';

export const POST = endpoint(async (context, runtime) => {
  // Counted before parsing: a script posting junk uses up its window as fast as one asking for links.
  await consumeRateLimit(runtime, RATE_LIMITS.memberSignIn, clientIp(context, runtime));
  const input = await parseJsonBody(context.request, memberSignInInputSchema);
  await requestSignInLink(runtime, input);
  return json({ message: 'Check your inbox: we sent you a link to sign in.' });
});

export const ALL = allowMethods({ POST });
