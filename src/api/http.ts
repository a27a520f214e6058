/** The HTTP edge of the API: parse input with zod, map errors to statuses, one JSON error shape. */
import type { APIContext, APIRoute } from 'astro';
import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';
import type { z } from 'zod';
import { AppError, isAppError, isServiceUnavailable, serviceUnavailableOf, type AppErrorIssue } from '../server/errors.ts';
import { asStorageError } from '../server/storage-faults.ts';
import { readBodyBytes } from './body-limit.ts';
import { can, type Action } from '../lib/permissions.ts';
import { assertCan } from '../server/permissions.ts';
import type { Runtime } from '../server/runtime.ts';
import type { User } from '../schemas/auth.ts';
import { logOncePerMinute, type Logger } from '../server/log.ts';
import type { Actor, Viewer } from '../server/articles.ts';

/** JSON bodies are small: an article body is the largest at ~500 KB. */
export const MAX_JSON_BYTES = 1024 * 1024;

/**
 * No contract nests more than a few levels; deeper bodies are refused before a schema sees them,
 * because error messages that print the input (String([[[...]]])) recurse and overflow the stack.
 */
export const MAX_JSON_DEPTH = 32;

/** Whether a parsed JSON value nests deeper than `max` objects or arrays (iterative: depth cannot overflow it). */
function isNestedDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth > max) return true;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return false;
}

export function json(data: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(data), {
    status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...headers },
  });
}

export function noContent(headers: Record<string, string> = {}): Response {
  return new Response(null, { status: 204, headers: { 'Cache-Control': 'no-store', ...headers } });
}

export function errorResponse(
  status: number,
  error: string,
  issues?: AppErrorIssue[],
  headers: Record<string, string> = {},
  details?: Record<string, unknown>,
): Response {
  return json({ ...details, ...(issues && issues.length ? { error, issues } : { error }) }, status, headers);
}

function issuesOf(error: z.ZodError): AppErrorIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p)),
    message: issue.message,
  }));
}

/** Parses with a schema or throws a 400 AppError listing the issues. */
export function parseWith<S extends z.ZodType>(schema: S, data: unknown, what = 'Invalid request'): z.output<S> {
  const result = schema.safeParse(data);
  if (!result.success) {
    const issues = issuesOf(result.error);
    const first = issues[0];
    const detail = first ? `: ${first.path.length ? `${first.path.join('.')}: ` : ''}${first.message}` : '';
    throw new AppError(400, `${what}${detail}`, { issues });
  }
  return result.data;
}

export const CROSS_ORIGIN_REFUSED = 'Cross-origin request refused';

/**
 * Whether a state-changing request comes from another site: its Origin is none of `origins` (URLs,
 * compared by origin), or, without an Origin, its Sec-Fetch-Site says another site. A client that sends
 * neither is not a browser and cannot carry a victim's cookies.
 */
export function isCrossOrigin(origin: string | null, fetchSite: string | null, origins: string[]): boolean {
  if (origin === null) return fetchSite !== null && fetchSite !== 'same-origin' && fetchSite !== 'none';
  return !origins.some((url) => URL.canParse(url) && new URL(url).origin === origin);
}

/** Query-string parameters (the last value of a repeated key wins) parsed by a schema. */
export function parseQuery<S extends z.ZodType>(url: URL, schema: S): z.output<S> {
  return parseWith(schema, Object.fromEntries(url.searchParams), 'Invalid query');
}

/**
 * Reads and parses a JSON body: 415 for another content type, 413 when too large, 400 when malformed or invalid.
 * `acceptTextPlain` is for beacons: navigator.sendBeacon sends a JSON string as text/plain.
 */
export async function parseJsonBody<S extends z.ZodType>(
  request: Request,
  schema: S,
  maxBytes = MAX_JSON_BYTES,
  options: JsonTypeOptions = {},
): Promise<z.output<S>> {
  assertJsonType(request.headers.get('content-type'), options);
  return parseJsonBytes(await readBodyBytes(request, maxBytes), schema);
}

export type JsonTypeOptions = { acceptTextPlain?: boolean };

/** A 415 unless the Content-Type says JSON (or, with `acceptTextPlain`, plain text). Checked before the body is read. */
export function assertJsonType(type: string | null, options: JsonTypeOptions = {}): void {
  const isJson = /^application\/(?:[\w.+-]+\+)?json\b/i.test(type ?? '');
  const isText = options.acceptTextPlain === true && /^text\/plain\b/i.test(type ?? '');
  if (!isJson && !isText) throw new AppError(415, 'Expected a JSON body (Content-Type: application/json)');
}

/** A body's bytes as JSON parsed by a schema: 400 for bytes that are not UTF-8, not JSON, nested too deep or invalid. */
export function parseJsonBytes<S extends z.ZodType>(bytes: Uint8Array, schema: S): z.output<S> {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new AppError(400, 'The body is not valid UTF-8');
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new AppError(400, 'Malformed JSON body');
  }
  if (isNestedDeeperThan(data, MAX_JSON_DEPTH)) throw new AppError(400, `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`);
  return parseWith(schema, data, 'Invalid body');
}

/** Parses an empty body (or `{}`) for action endpoints: anything else is a 400. */
export async function expectEmptyBody(request: Request): Promise<void> {
  const bytes = await readBodyBytes(request, 1024);
  const text = new TextDecoder().decode(bytes).trim();
  if (text !== '' && text !== '{}' && text !== 'null') throw new AppError(400, 'This endpoint takes no body');
}

/** Logs an unavailability (a warning), once a minute per cause rather than once per request. */
export function logUnavailable(log: Logger | undefined, error: AppError): void {
  if (log)
    logOncePerMinute(
      log,
      `api-503:${error.message}`,
      { status: error.status, err: error.message },
      `[api] ${error.status}: ${error.message}`,
    );
}

/**
 * Maps any thrown error to a response; unexpected ones are logged (with the request's id) and answer 500.
 * A dependency that is down (the store's database among them) answers 503 with Retry-After.
 */
export function toErrorResponse(error: unknown, log: Logger | undefined): Response {
  const unavailable = serviceUnavailableOf(error);
  if (unavailable) {
    // A full disk was reported where it was met (storage-faults.ts), once a minute: not again here.
    if (!(isServiceUnavailable(unavailable) && unavailable.reported)) logUnavailable(log, unavailable);
    return errorResponse(unavailable.status, unavailable.message, undefined, unavailable.headers);
  }
  if (isAppError(error)) {
    // A 5xx the domain chose is still worth a line; 4xx are the client's.
    if (error.status >= 500) log?.warn({ status: error.status, err: error.message }, `[api] ${error.status}: ${error.message}`);
    return errorResponse(error.status, error.message, error.issues, error.headers, error.details);
  }
  // No runtime (it failed to start): the HTTP server's access line still records the 500.
  log?.error({ err: error }, '[api] unexpected error');
  return errorResponse(500, 'Internal server error');
}

/**
 * The page an on-demand HTML route (the admin, the editor) answers while a dependency is down: a 503
 * that says so and asks the browser to try again, instead of a sign-in page or a stack trace.
 */
export function unavailablePage(error: AppError): Response {
  const retryAfter = error.headers?.['Retry-After'] ?? '5';
  const message = error.message.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<meta http-equiv="refresh" content="${Number(retryAfter) * 2}">
<title>Temporarily unavailable</title>
</head>
<body>
<main>
<h1>Temporarily unavailable</h1>
<p>${message}</p>
<p>You are still signed in, and nothing you saved is lost. This page tries again by itself, or <a href="">try again now</a>.</p>
</main>
</body>
</html>
`;
  return new Response(html, {
    status: 503,
    headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', 'Retry-After': retryAfter },
  });
}

/**
 * The `ALL` export of a route: answers 405 with an Allow header for methods the route does not
 * export (Astro would answer an empty 404), and serves HEAD from GET.
 */
export function allowMethods(handlers: Partial<Record<'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', APIRoute>>): APIRoute {
  const allowed = Object.keys(handlers);
  if (handlers.GET) allowed.push('HEAD');
  return (context) => {
    if (context.request.method === 'HEAD' && handlers.GET) return handlers.GET(context);
    return errorResponse(405, `Method ${context.request.method} is not allowed here`, undefined, { Allow: allowed.join(', ') });
  };
}

/** The runtime our HTTP server handed this request (src/api/node-server.ts); a request without one is a wiring mistake. */
export function runtimeOf(locals: App.Locals): Runtime {
  if (!locals.runtime) throw new Error('No runtime in locals: the server hands it to every request (src/server/app.ts)');
  return locals.runtime;
}

export type Handler = (context: APIContext, runtime: Runtime) => Promise<Response> | Response;

/** Wraps an endpoint: provides the runtime and turns thrown errors into JSON answers. */
export function endpoint(handler: Handler): APIRoute {
  return async (context) => {
    let runtime: Runtime | undefined;
    try {
      runtime = runtimeOf(context.locals);
      return await handler(context, runtime);
    } catch (error) {
      // A write under DATA_DIR outside the store (an upload, an image) that met a full disk: the same 503.
      return toErrorResponse(runtime ? asStorageError(runtime, error) : error, runtime?.log);
    }
  };
}

export type SignedInHandler = (context: APIContext, runtime: Runtime, user: User) => Promise<Response> | Response;

/**
 * Like endpoint, for calls that need a session and a permission: 401 without a valid session, 403
 * when the user's role may not do `action` at all (per-article checks happen in the domain).
 */
export function authorizedEndpoint(action: Action, handler: SignedInHandler): APIRoute {
  return endpoint((context, runtime) => {
    const user = context.locals.user;
    assertCan(user, action);
    return handler(context, runtime, user!);
  });
}

/**
 * Who is asking, for the article visibility rule: unpublished articles for roles that may read them (authors and contributors: their own).
 */
export function viewerOf(context: APIContext): Viewer {
  const user = context.locals.user;
  if (!user || !can(user, 'article.read')) return { isAdmin: false };
  return can(user, 'article.read', { status: 'draft' }) ? { isAdmin: true } : { isAdmin: true, ownerId: user.id };
}

/** Who is asking, for comments: hidden ones and commenters' e-mail addresses only for roles that moderate. */
export function commentViewerOf(context: APIContext): Viewer {
  const user = context.locals.user;
  return { isAdmin: user !== undefined && can(user, 'comment.moderate') };
}

/** The signed-in user as the domain sees an actor: plain values, no HTTP objects. */
export function actorOf(user: User): Actor {
  return { id: user.id, username: user.username, role: user.role };
}

/** A route parameter, which must be present (Astro guarantees it for the matching route). */
export function param(context: APIContext, name: string): string {
  const value = context.params[name];
  if (!value) throw new AppError(404, 'Not found');
  return value;
}

/**
 * The client's IP: the socket address, or with TRUST_PROXY = n hops the address the n-th trusted
 * proxy saw (the entry it appended to X-Forwarded-For), so entries a client writes itself never count.
 */
export function clientIp(context: APIContext, runtime: Runtime): string {
  let socketAddress: string;
  try {
    socketAddress = context.clientAddress;
  } catch {
    return 'unknown';
  }
  return clientAddressOf(socketAddress, context.request.headers.get('x-forwarded-for'), runtime.config.TRUST_PROXY);
}

/** The address `proxy-addr` picks from a socket address and an X-Forwarded-For value, trusting `hops` proxies. */
export function clientAddressOf(socketAddress: string, forwardedFor: string | null, hops: number): string {
  if (hops <= 0 || !forwardedFor) return socketAddress;
  // proxy-addr reads a Node request; these are the only two fields it looks at.
  const request = {
    socket: { remoteAddress: socketAddress },
    connection: { remoteAddress: socketAddress },
    headers: { 'x-forwarded-for': forwardedFor },
  };
  return proxyaddr(request as unknown as IncomingMessage, (_address, hop) => hop < hops);
}
