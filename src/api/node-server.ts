/**
 * The HTTP server: static files from dist/client (what readers get), everything else handed to
 * Astro's request handler (API, admin, render twins). Headers, timeouts and validators live here.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import send from 'send';
import { sendFileSnapshot } from '../server/publishing/serve-file.ts';

export type AstroHandler = (req: http.IncomingMessage, res: http.ServerResponse, next?: (err?: unknown) => void) => void | Promise<void>;

export type ServerOptions = {
  /** Folder with the built static files (dist/client). */
  clientDir: string;
  /** Folder with processed images (DATA_DIR/images), served under /images/. */
  imagesDir: string;
  handler: AstroHandler;
};

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
const IMAGE_CACHE = 'public, max-age=31536000, immutable';

/** Maps a URL path to a file under the client folder, or undefined (then Astro answers). */
export function resolveStaticFile(clientDir: string, urlPath: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0') || decoded.split('/').some((part) => part === '..' || (part.startsWith('.') && part !== '.well-known'))) return undefined;
  const root = path.resolve(clientDir);
  const target = path.resolve(root, `.${decoded}`);
  if (target !== root && !target.startsWith(root + path.sep)) return undefined;
  for (const candidate of [target, path.join(target, 'index.html')]) {
    try {
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // Not there: try the next candidate.
    }
  }
  return undefined;
}

function cacheControlFor(relative: string): string {
  if (relative.startsWith('/_astro/')) return ASSET_CACHE;
  if (relative.startsWith('/pagefind/')) return 'public, max-age=60';
  return HTML_CACHE;
}

export function createRequestListener(options: ServerOptions): http.RequestListener {
  const clientRoot = path.resolve(options.clientDir);
  const imagesRoot = path.resolve(options.imagesDir);
  return (req, res) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    const url = req.url ?? '/';
    const pathname = url.split('?')[0]!.split('#')[0]!;
    const isRead = req.method === 'GET' || req.method === 'HEAD';
    if (isRead && pathname === '/') {
      res.writeHead(302, { Location: '/section/world', 'Cache-Control': 'public, max-age=3600' });
      res.end();
      return;
    }
    // Uploaded and generated images live with the data, not the build; they are never HTML or script.
    const isImage = pathname.startsWith('/images/');
    const root = isImage ? imagesRoot : clientRoot;
    const file = isRead && !pathname.startsWith('/api/') ? resolveStaticFile(root, isImage ? pathname.slice('/images'.length) : pathname) : undefined;
    if (isImage && (!file || !IMAGE_FILE.test(file))) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('Not found');
      return;
    }
    const passToAstro = () => {
      void Promise.resolve(options.handler(req, res)).catch((error: unknown) => {
        console.error('[server] handler failed', error);
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: 'Internal server error' }));
      });
    };
    if (!file) {
      passToAstro();
      return;
    }
    const relative = '/' + path.relative(root, file).split(path.sep).join('/');
    if (!isImage) {
      // Built pages are replaced while the server runs (regeneration): answer from one open descriptor,
      // and let Astro answer (404) when the file was removed since it was found.
      sendFileSnapshot(req, res, file, { 'Cache-Control': cacheControlFor(relative) })
        .then((sent) => {
          if (!sent) passToAstro();
        })
        .catch((error: unknown) => {
          console.error('[server] static file failed', error);
          if (!res.headersSent) res.writeHead(500);
          res.end();
        });
      return;
    }
    send(req, relative, { root, dotfiles: 'allow', index: false, etag: true, lastModified: true, cacheControl: false })
      .on('headers', (response: http.ServerResponse) => {
        response.setHeader('Cache-Control', isImage ? IMAGE_CACHE : cacheControlFor(relative));
        if (isImage) response.setHeader('Content-Security-Policy', "default-src 'none'; sandbox; frame-ancestors 'none'");
      })
      .on('error', (error: { status?: number }) => {
        if (!res.headersSent) res.writeHead(error.status ?? 500);
        res.end();
      })
      .pipe(res);
  };
}

/** An HTTP server with timeouts that cut off slow or idle clients. */
export function createHttpServer(options: ServerOptions): http.Server {
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
    createRequestListener(options),
  );
  return server;
}
