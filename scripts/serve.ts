/**
 * Starts the server: the built Astro app behind our static file server, with the runtime booted first.
 * Run directly (`npm run serve`, the systemd unit) it is production mode; `npm start` calls it after its preparations.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import fs from 'node:fs';
import { getConfig, OutDirError } from '../src/config.ts';
import { findProductionProblem, parseProductionConfig } from '../src/server/production.ts';
import { bootRuntime } from '../src/server/boot.ts';
import { stopRuntime } from '../src/server/runtime.ts';
import { createHttpServer, type AstroHandler } from '../src/api/node-server.ts';
import { StoreLockedError } from '../src/store/index.ts';
import { attachPublishingSite } from '../src/server/publishing/service.ts';
import { lockServedFolder, ServedFolderLockedError } from '../src/server/publishing/serve-lock.ts';
import { outDirOf, serveDirOf } from './build-state.ts';
import { announceServer } from '../src/server/briefing/service.ts';
import { syncStoredPages } from '../src/server/publishing/shared-pages.ts';
import { portTakenMessage } from './server-process.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** How long a stop waits for the requests in flight before it closes their connections. */
const REQUEST_DRAIN_MS = 2000;

export type ServeOptions = {
  /** Refuse an unsafe configuration (exit 2), seed demo content only when SEED=demo is explicit, generate no admin password. */
  production: boolean;
};

async function main({ production }: ServeOptions): Promise<void> {
  const entry = path.join(outDirOf(root), 'server/entry.mjs');
  const clientDir = serveDirOf(root);
  let config;
  try {
    config = production ? parseProductionConfig() : getConfig();
  } catch (error) {
    // A bad value is a configuration error like the refusals below: named, and no restart loop (exit 2).
    const [title, ...issues] = (error as Error).message.split('\n');
    console.error(`Cannot start: ${[title, issues.map((line) => line.trim()).join('; ')].join(' ')}`);
    process.exit(2);
  }
  if (!fs.existsSync(entry)) {
    console.error(`No build found (${path.relative(root, entry) || entry}). Run \`npm run build\` first, or use \`npm start\`.`);
    process.exit(1);
  }
  const problem = production ? findProductionProblem(process.env, { dataDir: config.DATA_DIR, servedDir: clientDir }) : undefined;
  if (problem) {
    console.error(`Cannot start: ${problem}`);
    process.exit(2);
  }
  // Before the store: a second server on this folder must not even open its data.
  lockServedFolder(clientDir);
  const runtime = await bootRuntime(config, { production });
  // The bundle must not start a standalone server of its own.
  process.env.ASTRO_NODE_AUTOSTART = 'disabled';
  const { handler } = (await import(pathToFileURL(entry).href)) as { handler: AstroHandler };
  // Several servers on one database: pages the others rendered while this one was down are copied in before it serves.
  let syncedThrough: number | undefined;
  if (runtime.store.pages.shared) {
    const synced = await syncStoredPages(runtime.store, { clientDir, imagesDir: path.join(path.resolve(config.DATA_DIR), 'images') });
    console.log(`[publish] stored pages copied before serving: ${synced.written} written, ${synced.deleted} deleted of ${synced.checked}`);
    // The worker's sync after LISTEN then checks only what changed since, not every page again.
    syncedThrough = synced.throughSeq;
  }
  const server = createHttpServer({
    clientDir,
    imagesDir: path.join(path.resolve(config.DATA_DIR), 'images'),
    handler,
    staticCacheBytes: config.STATIC_CACHE_MB * 1024 * 1024,
  });
  // Taken between `npm start`'s check and now, or `npm run serve` on a port in use: a sentence, not a stack.
  server.once('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EADDRINUSE') throw error;
    console.error(portTakenMessage(config.HOST, config.PORT));
    void stopRuntime().finally(() => process.exit(2));
  });
  server.listen(config.PORT, config.HOST, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.PORT;
    const shown = config.HOST === '0.0.0.0' || config.HOST === '::' ? 'localhost' : config.HOST;
    // The regeneration worker renders pages by calling this server's twin routes over loopback.
    const loopback =
      config.HOST === '0.0.0.0'
        ? '127.0.0.1'
        : config.HOST === '::'
          ? '[::1]'
          : config.HOST.includes(':')
            ? `[${config.HOST}]`
            : config.HOST;
    attachPublishingSite(runtime, {
      clientDir,
      origin: `http://${loopback}:${port}`,
      serverEntry: entry,
      ...(syncedThrough === undefined ? {} : { syncedThrough }),
    });
    // `npm run briefing` finds the lock taken and asks this server, at this address, to send.
    announceServer(config.DATA_DIR, `http://${loopback}:${port}`);
    console.log(`Listening on http://${shown}:${port}`);
  });
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: shutting down`);
    // Requests in flight finish first (for at most REQUEST_DRAIN_MS): a save between its store write
    // and the queueing of its pages must not find the worker, which records what the pages were
    // rendered from as it stops, already gone, nor the store closed.
    const requestsDone = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const drainCap = new Promise<void>((resolve) => setTimeout(resolve, REQUEST_DRAIN_MS).unref());
    void Promise.race([requestsDone, drainCap])
      .then(() => {
        server.closeAllConnections();
        return stopRuntime();
      })
      .finally(() => process.exit(0));
    // Within a container's usual 10 s between SIGTERM and SIGKILL.
    setTimeout(() => process.exit(0), 9000).unref();
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

/** Serves the site until SIGINT or SIGTERM; a configuration it cannot start with exits 2 with one sentence. */
export function serveSite(options: ServeOptions): Promise<void> {
  return main(options).catch(exitOnStartError);
}

function exitOnStartError(error: unknown): never {
  if (
    error instanceof StoreLockedError ||
    error instanceof ServedFolderLockedError ||
    error instanceof OutDirError ||
    (error as Error)?.name === 'StoreLockedError'
  ) {
    console.error(`Cannot start: ${(error as Error).message}`);
    process.exit(2);
  }
  console.error(error);
  process.exit(1);
}

if (import.meta.main) await serveSite({ production: true });
