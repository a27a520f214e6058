/** POST /api/analytics/pageview: a first-party page-view beacon (204); article paths count a view. */
import { allowMethods, clientIp, endpoint, noContent, parseJsonBody } from '../../../api/http.ts';
import { pageviewInputSchema } from '../../../schemas/misc.ts';
import { recordPageView } from '../../../server/articles.ts';
import { RATE_LIMITS, consumeRateLimit } from '../../../server/rate-limit.ts';

/** A beacon is a path and little else. */
const MAX_BEACON_BYTES = 4 * 1024;

export const POST = endpoint(async (context, runtime) => {
  await consumeRateLimit(runtime, RATE_LIMITS.pageview, clientIp(context, runtime));
  // navigator.sendBeacon sends a JSON string as text/plain.
  const { path } = await parseJsonBody(context.request, pageviewInputSchema, MAX_BEACON_BYTES, { acceptTextPlain: true });
  await recordPageView(runtime, path);
  return noContent();
});

export const ALL = allowMethods({ POST });
