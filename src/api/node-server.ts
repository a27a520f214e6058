/**
 * The HTTP server: static files from dist/client (what readers get) and page-view beacons, everything
 * else handed to Astro's request handler (API, admin, render twins). Headers, timeouts and validators live here.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import send from 'send';
import { isCompressedTwin } from '../server/publishing/compress.ts';
import { onServedFileChange } from '../server/publishing/files.ts';
import type { Logger, RequestContext, RequestScope } from '../server/log.ts';
import type { Metrics } from '../server/metrics.ts';
import type { Runtime } from '../server/runtime.ts';
import { BEACON_PATH, answerBeacon, isFastBeacon } from './beacon.ts';
import { clientAddressOf } from './http.ts';
import { answerMetrics, isMetricsRequestAllowed } from './metrics.ts';
import { StaticFiles } from './static-files.ts';

export type AstroHandler = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  next?: (err?: unknown) => void,
  locals?: App.Locals,
) => void | Promise<void>;

export type ServerOptions = {
  /** Folder with the built static files (dist/client). */
  clientDir: string;
  /** Folder with processed images (DATA_DIR/images), served under /images/. */
  imagesDir: string;
  handler: AstroHandler;
  /** The process's runtime, handed to every request as `locals.runtime` (absent in the rebuild's own server, which answers only twins). */
  runtime?: Runtime;
  /** Memory for hot static files and their compressed twins, in bytes. @default 64 MiB */
  staticCacheBytes?: number;
  /** The server's logger: one access line per request, and every failure. Absent, nothing is logged (the rebuild's own server). */
  log?: Logger;
  /** The request scope `log` reads request ids from: each request runs in it. */
  requests?: RequestScope;
  /** Request durations by route go here; `/metrics` answers them when `metricsToken` is set. */
  metrics?: Metrics;
  /** Proxies trusted to append to X-Forwarded-For (TRUST_PROXY), for the access line's client address. @default 0 */
  trustProxy?: number;
  /** Opens `/metrics` on this server to `Authorization: Bearer <token>` (METRICS_TOKEN); unset, `/metrics` is 404. */
  metricsToken?: string;
};

/** A request id a client or a proxy may hand us: a plain token, short enough for a log line. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
/** The longest path an access line repeats; the rest is cut (a URL may be 16 KiB). */
const MAX_LOGGED_PATH = 512;

/** The request's own X-Request-Id when it is a sane token, else a new one. */
export function requestIdOf(header: string | string[] | undefined): string {
  return typeof header === 'string' && SANE_REQUEST_ID.test(header) ? header : randomUUID();
}

/**
 * A URL as an access line shows it: the path only (tokens travel in query strings: the newsletter's
 * confirm and unsubscribe links, upload signatures), with the upload token in the path masked.
 */
export function loggedPathOf(url: string): string {
  const end = url.search(/[?#]/);
  let pathname = end === -1 ? url : url.slice(0, end);
  if (pathname.startsWith('/api/images/upload/')) pathname = '/api/images/upload/[token]';
  return pathname.length > MAX_LOGGED_PATH ? `${pathname.slice(0, MAX_LOGGED_PATH)}...` : pathname;
}

/** Headers every answer carries. */
export const SECURITY_HEADERS: Record<string, string> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'strict-origin-when-cross-origin',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin-allow-popups',
  // Pages carry their script and style policy in a <meta> (Astro's security.csp); what a <meta> cannot say goes here.
  'Content-Security-Policy': "frame-ancestors 'none'; object-src 'none'; base-uri 'self'",
};

/** What may be served from /images/: raster images only, whatever else ends up in that folder. */
const IMAGE_FILE = /\.(?:webp|avif|png|jpe?g|gif)$/i;

/** HTML may be a few seconds old at a cache; assets with a content hash never change. */
const HTML_CACHE = 'public, max-age=10, stale-while-revalidate=60';
const ASSET_CACHE = 'public, max-age=31536000, immutable';
/** A live article's live.json (issue 35): open pages poll it every 2 s, so a cache may keep it no longer. */
const LIVE_FEED_CACHE = 'public, max-age=2';
const LIVE_FEED = /^\/article\/[^/]+\/live\.json$/;
const IMAGE_CACHE = 'public, max-age=31536000, immutable';

/**
 * How long a lookup waits for a missing served folder: `npm run rebuild --full` swaps a new build in
 * with two renames (the old folder away, the new one in), and a request between them must not read
 * as a 404 of the whole site.
 */
const SWAP_WAIT_MS = 50;
const swapWait = new Int32Array(new SharedArrayBuffer(4));

/** Maps a URL path to a file under the client folder, or undefined (then Astro answers). */
export function resolveStaticFile(clientDir: string, urlPath: string, swapWaitMs = SWAP_WAIT_MS): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0') || decoded.split('/').some((part) => part === '..' || (part.startsWith('.') && part !== '.well-known')))
    return undefined;
  const root = path.resolve(clientDir);
  const target = path.resolve(root, `.${decoded}`);
  if (target !== root && !target.startsWith(root + path.sep)) return undefined;
  // Compressed twins are answers to Accept-Encoding, not files of their own: checked on the resolved
  // name, since /rss.xml.br/ names the same file as /rss.xml.br.
  if (isCompressedTwin(target)) return undefined;
  // Whether the folder was there before the last look: only then is a miss a miss, since a swap's second
  // rename may land between a look and the folder's check (it did once in CI). Checked on a miss only.
  let rootSeen = false;
  for (let waited = 0; ; waited++) {
    for (const candidate of [target, path.join(target, 'index.html')]) {
      try {
        if (fs.statSync(candidate).isFile()) return candidate;
      } catch {
        // Not there: try the next candidate.
      }
    }
    if (rootSeen || waited >= swapWaitMs) return undefined;
    // The two renames of a swap are microseconds apart: a missing folder is one being swapped.
    rootSeen = fs.existsSync(root);
    if (!rootSeen) Atomics.wait(swapWait, 0, 0, 1);
  }
}

function cacheControlFor(relative: string): string {
  if (relative.startsWith('/_astro/')) return ASSET_CACHE;
  if (relative.startsWith('/pagefind/')) return 'public, max-age=60';
  if (LIVE_FEED.test(relative)) return LIVE_FEED_CACHE;
  return HTML_CACHE;
}

function setSecurityHeaders(res: http.ServerResponse): void {
  for (const name in SECURITY_HEADERS) res.setHeader(name, SECURITY_HEADERS[name]!);
}

/**
 * Clears `files` when the served folder itself is replaced (`npm run rebuild` renames a new build
 * over it): every held file is then another build's. Watches the parent folder, which outlives swaps.
 */
function watchFolderSwaps(clientRoot: string, files: StaticFiles): () => void {
  try {
    const name = path.basename(clientRoot);
    const watcher = fs.watch(path.dirname(clientRoot), { persistent: false }, (_event, changed) => {
      if (changed === null || changed === name) files.clear();
    });
    watcher.on('error', () => files.clear());
    return () => watcher.close();
  } catch {
    return () => {};
  }
}

export type RequestListener = http.RequestListener & { close: () => void; files: StaticFiles };

export function createRequestListener(options: ServerOptions): RequestListener {
  const clientRoot = path.resolve(options.clientDir);
  const imagesRoot = path.resolve(options.imagesDir);
  const files = new StaticFiles({ maxBytes: options.staticCacheBytes ?? 64 * 1024 * 1024, baseHeaders: SECURITY_HEADERS });
  // Pages this process regenerates are dropped from memory as they are renamed into place.
  const stopInvalidating = onServedFileChange((changed) => files.invalidate(changed));
  const stopWatching = watchFolderSwaps(clientRoot, files);

  const { log, requests, metrics } = options;
  const trustProxy = options.trustProxy ?? 0;

  /** The access line and the request's duration, once its answer is done (or its client gone). */
  const observe = (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    context: RequestContext,
    started: number,
    bytes: number,
    remoteAddress: string,
  ) => {
    const seconds = (performance.now() - started) / 1000;
    const route = context.route ?? 'not_found';
    const method = req.method ?? 'GET';
    const status = res.statusCode;
    metrics?.httpRequests.observe({ route, method, status: String(status) }, seconds);
    if (!log) return;
    const line = {
      reqId: context.reqId,
      method,
      path: loggedPathOf(req.url ?? '/'),
      status,
      // On the wire, headers included: streamed answers have no Content-Length to read.
      bytes,
      ms: Math.round(seconds * 10_000) / 10,
      client: clientAddressOf(remoteAddress, (req.headers['x-forwarded-for'] as string | undefined) ?? null, trustProxy),
      ...(res.writableFinished ? {} : { aborted: true }),
    };
    const message = `${method} ${line.path} ${status}`;
    if (status >= 500) log.error(line, message);
    else log.info(line, message);
  };

  const listener = ((req, res) => {
    const context: RequestContext = { reqId: requestIdOf(req.headers['x-request-id']) };
    res.setHeader('X-Request-Id', context.reqId);
    if (log || metrics) {
      const started = performance.now();
      // Held here: by the time the answer closes, the request may have let go of its socket.
      const socket = req.socket;
      const bytesBefore = socket.bytesWritten;
      const remoteAddress = socket.remoteAddress ?? 'unknown';
      res.once('close', () => {
        // An exception in an event handler would end the process: observing must never cost the server.
        try {
          observe(req, res, context, started, socket.bytesWritten - bytesBefore, remoteAddress);
        } catch (error) {
          log?.error({ err: error, reqId: context.reqId }, '[server] access line failed');
        }
      });
    }
    if (requests) requests.run(context, handle, req, res, context);
    else handle(req, res, context);
  }) as RequestListener;

  const handle = (req: http.IncomingMessage, res: http.ServerResponse, context: RequestContext): void => {
    const url = req.url ?? '/';
    const method = req.method;
    const isRead = method === 'GET' || method === 'HEAD';
    if (isRead) {
      // The hot path: a held file answers from memory with headers made when it was read.
      const query = url.indexOf('?');
      const entry = files.lookup(query === -1 ? url : url.slice(0, query), Date.now());
      if (entry !== undefined) {
        context.route = 'static';
        files.respond(req, res, entry);
        return;
      }
    }
    const pathname = url.split('?')[0]!.split('#')[0]!;
    if (pathname === '/metrics') {
      context.route = 'metrics';
      setSecurityHeaders(res);
      if (!metrics || !options.metricsToken) {
        res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('Not found');
      } else if (!isMetricsRequestAllowed(req.headers.authorization, options.metricsToken)) {
        res.writeHead(401, { 'Content-Type': 'text/plain; charset=utf-8', 'WWW-Authenticate': 'Bearer' });
        res.end('Unauthorized');
      } else {
        void answerMetrics(req, res, metrics.registry);
      }
      return;
    }
    if (options.runtime && isFastBeacon(req, pathname)) {
      context.route = BEACON_PATH;
      setSecurityHeaders(res);
      answerBeacon(req, res, options.runtime).catch((error: unknown) => {
        log?.error({ err: error }, '[server] beacon failed');
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: 'Internal server error' }));
      });
      return;
    }
    if (isRead && pathname === '/') {
      context.route = 'redirect';
      setSecurityHeaders(res);
      res.writeHead(302, { Location: '/section/world', 'Cache-Control': 'public, max-age=3600' });
      res.end();
      return;
    }
    // Uploaded and generated images live with the data, not the build; they are never HTML or script.
    const isImage = pathname.startsWith('/images/');
    const root = isImage ? imagesRoot : clientRoot;
    const file =
      isRead && !pathname.startsWith('/api/') ? resolveStaticFile(root, isImage ? pathname.slice('/images'.length) : pathname) : undefined;
    const passToAstro = () => {
      setSecurityHeaders(res);
      // The middleware names the route it matched in `context.route` (the metrics' label).
      context.route = undefined;
      void Promise.resolve(
        options.handler(req, res, undefined, { request: context, ...(options.runtime ? { runtime: options.runtime } : {}) }),
      ).catch((error: unknown) => {
        log?.error({ err: error }, '[server] handler failed');
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: 'Internal server error' }));
      });
    };
    if (isImage && (!file || !IMAGE_FILE.test(file))) {
      context.route = 'not_found';
      setSecurityHeaders(res);
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('Not found');
      return;
    }
    if (!file) {
      passToAstro();
      return;
    }
    const relative = '/' + path.relative(root, file).split(path.sep).join('/');
    context.route = isImage ? 'image' : 'static';
    if (!isImage) {
      // Built pages are replaced while the server runs (regeneration): they are read from one open
      // descriptor, and Astro answers (404) when the file was removed since it was found.
      const cacheControl = cacheControlFor(relative);
      files
        .load(pathname, file, cacheControl)
        .then(async (loaded) => {
          if (loaded === undefined) passToAstro();
          else if ('large' in loaded) await files.respondLarge(req, res, loaded, cacheControl);
          else files.respond(req, res, loaded);
        })
        .catch((error: unknown) => {
          log?.error({ err: error }, '[server] static file failed');
          if (!res.headersSent) res.writeHead(500);
          res.end();
        });
      return;
    }
    setSecurityHeaders(res);
    send(req, relative, { root, dotfiles: 'allow', index: false, etag: true, lastModified: true, cacheControl: false })
      .on('headers', (response: http.ServerResponse) => {
        response.setHeader('Cache-Control', IMAGE_CACHE);
        response.setHeader('Content-Security-Policy', "default-src 'none'; sandbox; frame-ancestors 'none'");
      })
      .on('error', (error: { status?: number }) => {
        if (!res.headersSent) res.writeHead(error.status ?? 500);
        res.end();
      })
      .pipe(res);
  };
  listener.files = files;
  listener.close = () => {
    stopInvalidating();
    stopWatching();
  };
  return listener;
}

/** An HTTP server with timeouts that cut off slow or idle clients. */
export function createHttpServer(options: ServerOptions): http.Server {
  const listener = createRequestListener(options);
  const server = http.createServer(
    {
      requestTimeout: 30_000,
      headersTimeout: 10_000,
      keepAliveTimeout: 5_000,
      maxHeaderSize: 16 * 1024,
      // Node checks the two timeouts above only this often (default 30 s), which let a slow client hold
      // a connection for 30 s of headers and 60 s of body; once a second keeps them close to their values.
      connectionsCheckingInterval: 1_000,
    },
    listener,
  );
  server.once('close', () => listener.close());
  return server;
}
