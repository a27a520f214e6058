/**
 * Bench only: starts scripts/serve.ts and, beside it, a server on a port of its own (written to the
 * 0600 file BENCH_SSR_FILE) that renders each reader page per request the way the render thread
 * draws it: the page's data loaded from the live store, then its twin's view. The bench compares
 * serving the static file with that. The production server never does this.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { AstroHandler } from '../src/api/node-server.ts';
import { loadPage } from '../src/server/publishing/page-loads.ts';
import { TWIN_PREFIX } from '../src/schemas/pages.ts';
import { outDirOf } from '../scripts/build-state.ts';

const file = process.env.BENCH_SSR_FILE;
if (!file) throw new Error('BENCH_SSR_FILE is required');
const { serveSite } = await import('../scripts/serve.ts');
await serveSite({ production: true });
// The same module instance the server loaded, so the same bundle.
const entry = path.join(outDirOf(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')), 'server/entry.mjs');
const { handler } = (await import(pathToFileURL(entry).href)) as {
  handler: (req: http.IncomingMessage, res: http.ServerResponse, next: undefined, locals: App.Locals) => ReturnType<AstroHandler>;
};
const ssr = http.createServer((req, res) => {
  const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
  void loadPage(pathname).then(
    (load) => {
      if (load.kind !== 'page') {
        res.writeHead(404).end();
        return;
      }
      req.url = `${TWIN_PREFIX}${pathname}`;
      return handler(req, res, undefined, { twin: load.twin });
    },
    // A path no twin draws (loadPage throws for it rather than call it missing).
    () => res.writeHead(404).end(),
  );
});
ssr.listen(0, '127.0.0.1', () => {
  fs.writeFileSync(file, `http://127.0.0.1:${(ssr.address() as { port: number }).port}`, { mode: 0o600 });
});
