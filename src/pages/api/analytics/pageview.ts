/** POST /api/analytics/pageview: a first-party page-view beacon (204), `{ path, ref?, referrer? }`; front, section, article pages count. */
import { allowMethods, clientIp, endpoint, noContent, parseJsonBody } from '../../../api/http.ts';
import { pageviewInputSchema } from '../../../schemas/misc.ts';
import { recordPageView } from '../../../server/analytics/record.ts';
import { RATE_LIMITS, consumeRateLimit } from '../../../server/rate-limit.ts';

/** A beacon is a path and little else. */
const MAX_BEACON_BYTES = 4 * 1024;

export const POST = endpoint(async (context, runtime) => {
  await consumeRateLimit(runtime, RATE_LIMITS.pageview, clientIp(context, runtime));
  // navigator.sendBeacon sends a JSON string as text/plain.
  const input = await parseJsonBody(context.request, pageviewInputSchema, MAX_BEACON_BYTES, { acceptTextPlain: true });
  const headers = context.request.headers;
  await recordPageView(runtime, input, {
    userAgent: headers.get('user-agent'),
    refererHeader: headers.get('referer'),
    signedIn: context.locals.user !== undefined,
  });
  return noContent();
});

export const ALL = allowMethods({ POST });
