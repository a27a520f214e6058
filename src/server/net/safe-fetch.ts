/**
 * The one way the server fetches a user-supplied URL (feeds, remote images): http(s) only, public
 * addresses only (checked on every redirect hop and again at connect time), a deadline, a size cap.
 */
import type { LookupFunction } from 'node:net';
import { checkUrlPolicy, publicOnlyLookup } from './address-policy.ts';

export const MAX_REDIRECTS = 5;
export const DEFAULT_TIMEOUT_MS = 15_000;

export type SafeFetchOptions = {
  /** Lifts the address rule (FETCH_ALLOW_PRIVATE_NETWORKS, tests only). */
  allowPrivateNetworks: boolean;
  /** Largest decoded body accepted; a larger one is a 'too-large' error. */
  maxBytes: number;
  /** Budget for the whole exchange: every hop and the body. @default 15000 */
  timeoutMs?: number;
  headers?: Record<string, string>;
  userAgent?: string;
  /** Test-only: the first hop may be a private address (so a local server can redirect to a private one). */
  allowPrivateFirstHop?: boolean;
};

export type SafeResponse = {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  headers: Headers;
  /** The decoded body of a 2xx answer; empty for any other status. */
  body: Buffer;
};

export type SafeFetchErrorCode = 'blocked' | 'timeout' | 'too-large' | 'redirects' | 'network';

export class SafeFetchError extends Error {
  readonly code: SafeFetchErrorCode;
  constructor(code: SafeFetchErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.name = 'SafeFetchError';
    this.code = code;
  }
}

export const DEFAULT_USER_AGENT = 'MeridianNews/0.1 (news aggregator)';

type FetchFn = (input: string | URL, init?: RequestInit) => Promise<Response>;
type Fetchers = { guarded: FetchFn; open: FetchFn };

let fetchers: Promise<Fetchers> | undefined;

/**
 * Two fetch functions over guarded undici agents (loaded on first use: the library pulls in undici).
 * `guarded` vetoes private literal addresses on every dispatched hop and resolves names through
 * publicOnlyLookup; `open` keeps the scheme rule only, for FETCH_ALLOW_PRIVATE_NETWORKS.
 */
function loadFetchers(): Promise<Fetchers> {
  fetchers ??= import('@atproto-labs/fetch-node').then(({ safeDispatchFetchWrap }) => {
    const make = (allowPrivate: boolean, lookup: LookupFunction | undefined): FetchFn => {
      const wrapped = safeDispatchFetchWrap({
        fetch: globalThis.fetch,
        checkUrl: (url: URL) => checkUrlPolicy(url, { allowPrivate }),
        ...(lookup ? { lookup } : {}),
      });
      return (input, init) => wrapped(input, init);
    };
    return { guarded: make(false, publicOnlyLookup), open: make(true, undefined) };
  });
  return fetchers;
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

/** Reads a body stream up to `maxBytes` (decoded), failing as soon as it grows larger. */
async function readCapped(response: Response, maxBytes: number): Promise<Buffer> {
  const declared = Number(response.headers.get('content-length') ?? '');
  const encoded = (response.headers.get('content-encoding') ?? 'identity') !== 'identity';
  if (!encoded && Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw new SafeFetchError('too-large', `The response is larger than ${formatBytes(maxBytes)}`);
  }
  if (!response.body) return Buffer.alloc(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new SafeFetchError('too-large', `The response is larger than ${formatBytes(maxBytes)}`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total);
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / (1024 * 1024))} MB` : `${Math.round(bytes / 1024)} KB`;
}

/** Turns undici's 'fetch failed' TypeError (and aborts) into a SafeFetchError naming the cause; `inBody`: the answer had begun. */
function toSafeFetchError(error: unknown, url: URL, timeoutMs: number, inBody = false): SafeFetchError {
  if (error instanceof SafeFetchError) return error;
  const name = (error as { name?: string })?.name;
  if (name === 'TimeoutError' || name === 'AbortError')
    return new SafeFetchError(
      'timeout',
      inBody
        ? `${url.host} did not finish its answer within ${timeoutMs / 1000} s`
        : `${url.host} did not answer within ${timeoutMs / 1000} s`,
      { cause: error },
    );
  const causes: unknown[] = [];
  for (let e: unknown = error; e && causes.length < 5; e = (e as { cause?: unknown }).cause) causes.push(e);
  const blocked = causes.find(
    (c) => (c as { code?: string }).code === 'EBLOCKEDADDRESS' || /Blocked by url policy/.test((c as Error)?.message ?? ''),
  );
  if (blocked) return new SafeFetchError('blocked', (blocked as Error).message, { cause: error });
  const root = causes[causes.length - 1] as { code?: string; message?: string } | undefined;
  const detail =
    root?.code === 'ENOTFOUND'
      ? `${url.hostname} was not found`
      : root?.code === 'ECONNREFUSED'
        ? `${url.host} refused the connection`
        : (root?.message ?? 'network error');
  return new SafeFetchError('network', `Could not reach ${url.host}: ${detail}`, { cause: error });
}

/**
 * Fetches a user-supplied URL under the SSRF policy. Redirects are followed here, hop by hop (at
 * most MAX_REDIRECTS), so each Location is checked before it is requested; non-2xx answers are
 * returned (with an empty body) for the caller to interpret (304, 429, 503...).
 */
export async function safeFetch(input: string, options: SafeFetchOptions): Promise<SafeResponse> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const signal = AbortSignal.timeout(timeoutMs);
  const { guarded, open } = await loadFetchers();
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new SafeFetchError('blocked', 'Not a valid URL');
  }
  const headers: Record<string, string> = {
    'User-Agent': options.userAgent ?? DEFAULT_USER_AGENT,
    'Accept-Encoding': 'gzip, deflate, br',
    ...options.headers,
  };
  for (let hop = 0; ; hop++) {
    const allowPrivate = options.allowPrivateNetworks || (hop === 0 && options.allowPrivateFirstHop === true);
    const reason = checkUrlPolicy(url, { allowPrivate });
    if (reason) throw new SafeFetchError('blocked', reason);
    let response: Response;
    try {
      response = await (allowPrivate ? open : guarded)(url, { headers, redirect: 'manual', signal });
    } catch (error) {
      throw toSafeFetchError(error, url, timeoutMs);
    }
    const location = response.headers.get('location');
    if (isRedirect(response.status) && location) {
      await response.body?.cancel().catch(() => {});
      if (hop >= MAX_REDIRECTS) throw new SafeFetchError('redirects', `More than ${MAX_REDIRECTS} redirects`);
      try {
        url = new URL(location, url);
      } catch {
        throw new SafeFetchError('network', `Invalid redirect target from ${url.host}`);
      }
      continue;
    }
    if (response.status < 200 || response.status > 299) {
      await response.body?.cancel().catch(() => {});
      return { url: url.href, status: response.status, headers: response.headers, body: Buffer.alloc(0) };
    }
    try {
      const body = await readCapped(response, options.maxBytes);
      return { url: url.href, status: response.status, headers: response.headers, body };
    } catch (error) {
      throw toSafeFetchError(error, url, timeoutMs, true);
    }
  }
}
