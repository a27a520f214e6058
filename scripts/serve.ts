/**
 * Starts the server: the built Astro app behind our static file server, with the runtime booted first.
 * Run directly (`npm run serve`, the systemd unit) it is production mode; `npm start` calls it after its preparations.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import fs from 'node:fs';
import { getConfig, OutDirError, type Config } from '../src/config.ts';
import { findProductionProblem, parseProductionConfig } from '../src/server/production.ts';
import { bootRuntime } from '../src/server/boot.ts';
import { stopRuntime } from '../src/server/app.ts';
import { createHttpServer, type AstroHandler } from '../src/api/node-server.ts';
import { StoreLockedError } from '../src/store/index.ts';
import { attachPublishingSite } from '../src/server/publishing/service.ts';
import { lockServedFolder, ServedFolderLockedError } from '../src/server/publishing/serve-lock.ts';
import { outDirOf, readBuildInfo, serveDirOf } from './build-state.ts';
import { announceServer } from '../src/server/briefing/service.ts';
import { syncStoredPages } from '../src/server/publishing/shared-pages.ts';
import { portTakenMessage } from './server-process.ts';
import { createLog, type Logger, type RequestScope } from '../src/server/log.ts';
import { createMetricsServer } from '../src/api/metrics.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** How long a stop waits for the requests in flight before it closes their connections. */
const REQUEST_DRAIN_MS = 2000;

export type ServeOptions = {
  /** Refuse an unsafe configuration (exit 2), seed demo content only when SEED=demo is explicit, generate no admin password. */
  production: boolean;
  /** The logger `npm start` already made; otherwise one is made from the configuration. */
  logging?: Logging;
};

type Logging = { log: Logger; requests: RequestScope };

/** A configuration the server cannot start with: one sentence on stderr (a person or the journal reads it), exit code 2. */
function refuseToStart(message: string): never {
  process.stderr.write(`Cannot start: ${message}\n`);
  process.exit(2);
}

async function main(production: boolean, config: Config, logging: Logging): Promise<void> {
  const { log } = logging;
  const entry = path.join(outDirOf(root), 'server/entry.mjs');
  const clientDir = serveDirOf(root);
  if (!fs.existsSync(entry)) {
    log.fatal(`No build found (${path.relative(root, entry) || entry}). Run \`npm run build\` first, or use \`npm start\`.`);
    process.exit(1);
  }
  const problem = production ? findProductionProblem(process.env, { dataDir: config.DATA_DIR, servedDir: clientDir }) : undefined;
  if (problem) refuseToStart(problem);
  // Before the store: a second server on this folder must not even open its data.
  lockServedFolder(clientDir);
  const runtime = await bootRuntime(config, { production, log: logging });
  // The bundle must not start a standalone server of its own.
  process.env.ASTRO_NODE_AUTOSTART = 'disabled';
  const { handler } = (await import(pathToFileURL(entry).href)) as { handler: AstroHandler };
  // Several servers on one database: pages the others rendered while this one was down are copied in before it serves.
  let syncedThrough: number | undefined;
  if (runtime.store.pages.shared) {
    const synced = await syncStoredPages(runtime.store, { clientDir, imagesDir: path.join(path.resolve(config.DATA_DIR), 'images') });
    log.info(
      { component: 'publish', ...synced },
      `[publish] stored pages copied before serving: ${synced.written} written, ${synced.deleted} deleted of ${synced.checked}`,
    );
    // The worker's sync after LISTEN then checks only what changed since, not every page again.
    syncedThrough = synced.throughSeq;
  }
  const server = createHttpServer({
    clientDir,
    imagesDir: path.join(path.resolve(config.DATA_DIR), 'images'),
    handler,
    runtime,
    staticCacheBytes: config.STATIC_CACHE_MB * 1024 * 1024,
    log,
    requests: runtime.requests,
    metrics: runtime.metrics,
    trustProxy: config.TRUST_PROXY,
    ...(config.METRICS_TOKEN ? { metricsToken: config.METRICS_TOKEN } : {}),
  });
  // Prometheus on a port of its own (loopback by default), no token: nothing else answers there.
  const metricsServer = config.METRICS_PORT === undefined ? undefined : createMetricsServer(runtime.metrics.registry);
  metricsServer?.once('error', (error: NodeJS.ErrnoException) => {
    log.fatal(
      `Cannot start: the metrics server cannot listen on ${config.METRICS_HOST}:${config.METRICS_PORT} (${error.code ?? error.message})`,
    );
    void stopRuntime(runtime).finally(() => process.exit(2));
  });
  metricsServer?.listen(config.METRICS_PORT, config.METRICS_HOST, () => {
    const address = metricsServer.address();
    const port = typeof address === 'object' && address ? address.port : config.METRICS_PORT;
    log.info({ host: config.METRICS_HOST, port }, `Metrics on http://${config.METRICS_HOST}:${port}/metrics`);
  });
  // Taken between `npm start`'s check and now, or `npm run serve` on a port in use: a sentence, not a stack.
  server.once('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EADDRINUSE') throw error;
    process.stderr.write(`${portTakenMessage(config.HOST, config.PORT)}\n`);
    void stopRuntime(runtime).finally(() => process.exit(2));
  });
  server.listen(config.PORT, config.HOST, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.PORT;
    const shown = config.HOST === '0.0.0.0' || config.HOST === '::' ? 'localhost' : config.HOST;
    // `npm run briefing` finds the lock taken and asks this server, at this address, to send.
    const loopback =
      config.HOST === '0.0.0.0'
        ? '127.0.0.1'
        : config.HOST === '::'
          ? '[::1]'
          : config.HOST.includes(':')
            ? `[${config.HOST}]`
            : config.HOST;
    // Pages drawn by another build (a deploy) are drawn again by this one while it serves.
    const build = readBuildInfo(root)?.render;
    attachPublishingSite(runtime, {
      clientDir,
      serverEntry: entry,
      ...(syncedThrough === undefined ? {} : { syncedThrough }),
      ...(build === undefined ? {} : { build }),
    });
    announceServer(config.DATA_DIR, `http://${loopback}:${port}`);
    log.info({ host: config.HOST, port }, `Listening on http://${shown}:${port}`);
  });
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    // Readiness answers 503 from now on, so a load balancer stops sending new requests while these finish.
    runtime.draining = true;
    log.info({ signal }, `${signal}: shutting down`);
    // Requests in flight finish first (for at most REQUEST_DRAIN_MS): a save between its store write
    // and the queueing of its pages must not find the worker, which records what the pages were
    // rendered from as it stops, already gone, nor the store closed.
    const requestsDone = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    metricsServer?.close();
    metricsServer?.closeAllConnections();
    const drainCap = new Promise<void>((resolve) => setTimeout(resolve, REQUEST_DRAIN_MS).unref());
    void Promise.race([requestsDone, drainCap])
      .then(() => {
        server.closeAllConnections();
        return stopRuntime(runtime);
      })
      .finally(() => process.exit(0));
    // Within a container's usual 10 s between SIGTERM and SIGKILL.
    setTimeout(() => process.exit(0), 9000).unref();
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

/** Serves the site until SIGINT or SIGTERM; a configuration it cannot start with exits 2 with one sentence. */
export async function serveSite(options: ServeOptions): Promise<void> {
  let config: Config;
  try {
    config = options.production ? parseProductionConfig() : getConfig();
  } catch (error) {
    // A bad value is a configuration error like the refusals below: named, and no restart loop (exit 2).
    const [title, ...issues] = (error as Error).message.split('\n');
    refuseToStart([title, issues.map((line) => line.trim()).join('; ')].join(' '));
  }
  const logging = options.logging ?? createLog(config);
  // A crash's last words as a log line too (Node still prints the stack and exits as it would).
  process.on('uncaughtExceptionMonitor', (error, origin) => logging.log.fatal({ err: error, origin }, `Crashed: ${error.message}`));
  await main(options.production, config, logging).catch((error: unknown) => {
    if (
      error instanceof StoreLockedError ||
      error instanceof ServedFolderLockedError ||
      error instanceof OutDirError ||
      (error as Error)?.name === 'StoreLockedError'
    ) {
      refuseToStart((error as Error).message);
    }
    logging.log.fatal({ err: error }, `Cannot start: ${(error as Error)?.message ?? String(error)}`);
    process.exit(1);
  });
}

if (import.meta.main) await serveSite({ production: true });
