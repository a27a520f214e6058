/**
 * POST /api/analytics/pageview: a first-party page-view beacon (204), `{ path, ref?, referrer? }`; front, section,
 * article pages count. Our server answers beacons without a session before Astro (src/api/beacon.ts): this
 * route answers the rest (staff, whose views are not counted) and `astro dev`.
 */
import { MAX_BEACON_BYTES, countBeacon } from '../../../api/beacon.ts';
import { allowMethods, clientIp, endpoint, noContent } from '../../../api/http.ts';
import { readBodyBytes } from '../../../api/body-limit.ts';

export const POST = endpoint(async (context, runtime) => {
  const headers = context.request.headers;
  await countBeacon(runtime, {
    contentType: headers.get('content-type'),
    readBody: () => readBodyBytes(context.request, MAX_BEACON_BYTES),
    userAgent: headers.get('user-agent'),
    referer: headers.get('referer'),
    clientIp: clientIp(context, runtime),
    signedIn: context.locals.user !== undefined,
  });
  return noContent();
});

export const ALL = allowMethods({ POST });
