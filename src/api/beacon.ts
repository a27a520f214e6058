/**
 * The page-view beacon, `POST /api/analytics/pageview`: one function counts it, and our HTTP server
 * answers it before Astro's request pipeline, which cost a beacon most of its CPU (docs/performance.md).
 */
import type http from 'node:http';
import { pageviewInputSchema } from '../schemas/misc.ts';
import { recordPageView } from '../server/analytics/record.ts';
import { SESSION_COOKIE } from '../server/auth.ts';
import { RATE_LIMITS, consumeRateLimit } from '../server/rate-limit.ts';
import type { Runtime } from '../server/runtime.ts';
import { asStorageError } from '../server/storage-faults.ts';
import { readNodeBodyBytes } from './body-limit.ts';
import {
  CROSS_ORIGIN_REFUSED,
  assertJsonType,
  clientAddressOf,
  errorResponse,
  isCrossOrigin,
  parseJsonBytes,
  toErrorResponse,
} from './http.ts';

export const BEACON_PATH = '/api/analytics/pageview';

/** A beacon is a path and little else. */
export const MAX_BEACON_BYTES = 4 * 1024;

/** What counting a beacon needs of its request, whichever server read it. */
export type BeaconRequest = {
  contentType: string | null;
  /** Reads the body (at most MAX_BEACON_BYTES), once the rate limit let the beacon through. */
  readBody: () => Promise<Uint8Array>;
  userAgent: string | null;
  referer: string | null;
  clientIp: string;
  /** A valid staff session: the view is not counted. */
  signedIn: boolean;
};

/** Counts one beacon (or not: bots, staff, unknown pages); throws the AppError a refused one answers. */
export async function countBeacon(runtime: Runtime, beacon: BeaconRequest): Promise<void> {
  await consumeRateLimit(runtime, RATE_LIMITS.pageview, beacon.clientIp);
  // navigator.sendBeacon sends a JSON string as text/plain.
  assertJsonType(beacon.contentType, { acceptTextPlain: true });
  const input = parseJsonBytes(await beacon.readBody(), pageviewInputSchema);
  await recordPageView(runtime, input, { userAgent: beacon.userAgent, refererHeader: beacon.referer, signedIn: beacon.signedIn });
}

const SESSION_COOKIE_PAIR = new RegExp(`(?:^|;)\\s*${SESSION_COOKIE}=`);

/**
 * Whether our server answers this request itself: a beacon without a session cookie. One with a session
 * goes through Astro, whose middleware validates the session (staff views are not counted).
 */
export function isFastBeacon(req: http.IncomingMessage, pathname: string): boolean {
  return req.method === 'POST' && pathname === BEACON_PATH && !SESSION_COOKIE_PAIR.test(req.headers.cookie ?? '');
}

/** Sends an answer of the API's shape from a Web Response (only errors come this way: they are rare). */
async function sendResponse(res: http.ServerResponse, response: Response): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(await response.text());
}

/** Answers a beacon on our server, as the Astro endpoint would: 204, or the error shape with its status. */
export async function answerBeacon(req: http.IncomingMessage, res: http.ServerResponse, runtime: Runtime): Promise<void> {
  const { headers } = req;
  const ownOrigin = `${'encrypted' in req.socket ? 'https' : 'http'}://${headers.host ?? ''}`;
  const fetchSite = headers['sec-fetch-site'];
  if (isCrossOrigin(headers.origin ?? null, typeof fetchSite === 'string' ? fetchSite : null, [ownOrigin, runtime.config.SITE_URL])) {
    await sendResponse(res, errorResponse(403, CROSS_ORIGIN_REFUSED));
    return;
  }
  try {
    const forwardedFor = headers['x-forwarded-for'];
    await countBeacon(runtime, {
      contentType: headers['content-type'] ?? null,
      readBody: () => readNodeBodyBytes(req, MAX_BEACON_BYTES),
      userAgent: headers['user-agent'] ?? null,
      referer: headers.referer ?? null,
      clientIp: clientAddressOf(
        req.socket.remoteAddress ?? 'unknown',
        typeof forwardedFor === 'string' ? forwardedFor : null,
        runtime.config.TRUST_PROXY,
      ),
      signedIn: false,
    });
    res.writeHead(204, { 'Cache-Control': 'no-store' });
    res.end();
  } catch (error) {
    await sendResponse(res, toErrorResponse(asStorageError(runtime, error), runtime.log));
  }
}
