/**
 * The running application: configuration, the open store and the hooks other subsystems plug into.
 * It is registered on globalThis because the server script and the Astro bundle each load their own
 * copy of this module, and both must share one store (one lock, one set of in-memory indexes).
 */
import type { Config } from '../config.ts';
import { getConfig } from '../config.ts';
import type { ArticleRecord } from '../schemas/article.ts';
import { openStore, type Store, type StoreOptions } from '../store/index.ts';
import { createLog, type Logger, type RequestScope } from './log.ts';
import { createMetrics, instrumentStore, type Metrics } from './metrics.ts';
import { HealthRegistry } from './health.ts';
import { guardStorageFaults } from './storage-faults.ts';

/** One article before and after a write (undefined before = created, undefined after = deleted). */
export type ArticleChange = { before: ArticleRecord | undefined; after: ArticleRecord | undefined };

export type RuntimeHooks = {
  /** Called after article writes that may change public pages; the publishing pipeline enqueues regeneration here. */
  articlesChanged: Array<(changes: ArticleChange[]) => Promise<void> | void>;
  /** Article writes under way, from before the store write until their hooks have run (see trackArticleWrite). */
  writesInFlight: number;
};

export type Runtime = {
  config: Config;
  store: Store;
  hooks: RuntimeHooks;
  /** Background services started with the server (scheduler, regeneration worker, feed fetcher). */
  services: Map<string, { stop(): Promise<void> | void }>;
  /** The folder readers are served from, once the HTTP server is attached (absent in builds and astro dev). */
  servedDir?: string;
  /** The one logger of the process (pino); its lines name the request they were written for. */
  log: Logger;
  /** The request scope `log` reads request ids from: the HTTP server runs each request in it. */
  requests: RequestScope;
  /** This runtime's Prometheus registry and the figures the server, the worker and the services keep. */
  metrics: Metrics;
  /** When the runtime started (Date.now()), for the uptime readiness reports. */
  startedAt: number;
  /** Set by a stop (SIGTERM) before the listener closes: readiness answers 503 from then on. */
  draining: boolean;
  /** Degraded states (a full disk, a database that is down): readiness answers 503 with them until they clear. */
  health: HealthRegistry;
  /** The publishing service's state (publishing/service.ts), here because the Astro bundle loads its own copy of that module. */
  publishing?: {
    worker?: { wake(): void; reconcile(reason: string): Promise<void>; stop(): Promise<void>; stats(): { reconcilePending: number } };
    counters: { batches: number; pagesQueued: number; lastBatchPages: number; maxBatchPages: number };
  };
};

export type RuntimeOptions = Pick<StoreOptions, 'lazyTextIndex'> & {
  /** The logger and request scope to use (the server makes them first, to log its start); made from the config when absent. */
  log?: { log: Logger; requests: RequestScope };
};

/** How long a query made for a request waits for its answer (docs/reliability.md: no answer later than 10 s). */
export const REQUEST_QUERY_TIMEOUT_MS = 7000;

const KEY = Symbol.for('meridian-news.runtime');
const READ_KEY = Symbol.for('meridian-news.read-store');
type Registry = { [KEY]?: Promise<Runtime>; [READ_KEY]?: Promise<Store> };
const registry = globalThis as unknown as Registry;

/** Opens the store for writing and registers the runtime for this process. */
export function startRuntime(config: Config = getConfig(), options: RuntimeOptions = {}): Promise<Runtime> {
  if (registry[KEY]) throw new Error('The runtime is already started in this process');
  const { log, requests } = options.log ?? createLog(config);
  const storeLog = log.child({ component: 'store' });
  const started = openStore(config.DATA_DIR, 'write', {
    databaseUrl: config.DATABASE_URL,
    log: { info: (line) => storeLog.info(line), error: (line) => storeLog.error(line) },
    // A request's queries give up on a database that hangs, so it answers 503 within 10 s; background work is not cut short.
    queryTimeoutMs: () => (requests.getStore() ? REQUEST_QUERY_TIMEOUT_MS : undefined),
    ...(options.lazyTextIndex === undefined ? {} : { lazyTextIndex: options.lazyTextIndex }),
  }).then((opened): Runtime => {
    const metrics = createMetrics({ readQueueDepth: () => opened.jobs.size() });
    const runtime: Runtime = {
      config,
      store: instrumentStore(opened, metrics.storeSeconds),
      hooks: { articlesChanged: [], writesInFlight: 0 },
      services: new Map(),
      log,
      requests,
      metrics,
      startedAt: Date.now(),
      draining: false,
      health: new HealthRegistry(),
    };
    // A full DATA_DIR answers writers 503 (and is reported) wherever a store call meets it.
    runtime.store = guardStorageFaults(runtime, runtime.store);
    return runtime;
  });
  registry[KEY] = started;
  started.catch(() => {
    delete registry[KEY];
  });
  return started;
}

/** The runtime of this process; started on first use when nothing registered one (astro dev). */
export function useRuntime(): Promise<Runtime> {
  return registry[KEY] ?? startRuntime();
}

/**
 * The store for rendering pages: the live one inside the server, or a read-only snapshot in a
 * build process (which must not take the lock: the server may be running while cron rebuilds).
 */
export async function useReadStore(): Promise<Store> {
  const live = registry[KEY];
  if (live) return (await live).store;
  registry[READ_KEY] ??= openStore(getConfig().DATA_DIR, 'read', { databaseUrl: getConfig().DATABASE_URL });
  return registry[READ_KEY];
}

/** Stops background services and closes the store. */
export async function stopRuntime(): Promise<void> {
  const started = registry[KEY];
  if (!started) return;
  const runtime = await started;
  for (const service of runtime.services.values()) await service.stop();
  runtime.services.clear();
  runtime.health.close();
  await runtime.store.close();
  delete registry[KEY];
}

/** Tells the subscribed subsystems which articles changed; counted in flight while the hooks run. */
export async function emitArticleChanges(runtime: Runtime, changes: ArticleChange[]): Promise<void> {
  if (changes.length === 0) return;
  await trackArticleWrite(runtime, async () => {
    for (const hook of runtime.hooks.articlesChanged) await hook(changes);
  });
}

/**
 * Runs an article write: the store write and the emitArticleChanges that follows it. It counts as
 * in flight from before the store's version moves until the hooks have queued its pages, so no one
 * takes that version for rendered (the render manifest) while the change's pages are not yet queued.
 */
export async function trackArticleWrite<T>(runtime: Runtime, write: () => Promise<T>): Promise<T> {
  runtime.hooks.writesInFlight++;
  try {
    return await write();
  } finally {
    runtime.hooks.writesInFlight--;
  }
}

/** Whether an article write is between its store write and the end of its hooks (the render manifest waits for it). */
export function articleWritesPending(runtime: Runtime): boolean {
  return runtime.hooks.writesInFlight > 0;
}
