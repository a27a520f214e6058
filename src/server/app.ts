/**
 * The composition root: builds a process's runtime (store, logger, metrics, health, mailer slot and the
 * coordination of its services) once, for the caller to hand down: the server to every request as
 * `locals.runtime`, scripts to the functions they call. docs/architecture.md, "Wiring", has the map.
 */
import type { Config } from '../config.ts';
import { getConfig } from '../config.ts';
import { getProcessWide } from '../lib/process-wide.ts';
import { openStore } from '../store/index.ts';
import { HealthRegistry } from './health.ts';
import { createLog } from './log.ts';
import { createMetrics, instrumentStore } from './metrics.ts';
import { createCoordination, REQUEST_QUERY_TIMEOUT_MS, setReadStore, type Runtime, type RuntimeOptions } from './runtime.ts';
import { guardStorageFaults } from './storage-faults.ts';

// The runtime this copy of the module started: a process opens its store for writing once.
let started: Promise<Runtime> | undefined;

/** Opens the store for writing and builds the runtime of this process around it. */
export function startRuntime(config: Config = getConfig(), options: RuntimeOptions = {}): Promise<Runtime> {
  if (started) throw new Error('The runtime is already started in this process');
  const { log, requests } = options.log ?? createLog(config);
  const storeLog = log.child({ component: 'store' });
  const opening = openStore(config.DATA_DIR, 'write', {
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
      ...createCoordination(),
    };
    // A full DATA_DIR answers writers 503 (and is reported) wherever a store call meets it.
    runtime.store = guardStorageFaults(runtime, runtime.store);
    return runtime;
  });
  started = opening;
  const store = opening.then((runtime) => runtime.store);
  // Pages and machine files of this process load their data from the live store.
  setReadStore(store);
  opening.catch(() => {
    started = undefined;
    setReadStore(undefined, store);
  });
  return opening;
}

/** Stops the runtime's background services and closes its store; without an argument, the one this process started. */
export async function stopRuntime(runtime?: Runtime): Promise<void> {
  const stopping = runtime ?? (await started?.catch(() => undefined));
  if (!stopping) return;
  for (const service of stopping.services.values()) await service.stop();
  stopping.services.clear();
  stopping.health.close();
  await stopping.store.close();
  if (started && (await started.catch(() => undefined)) === stopping) {
    started = undefined;
    setReadStore(undefined);
  }
}

/** `astro dev`: no server script hands requests a runtime, so the middleware starts one for the process on first use. */
export function useDevRuntime(): Promise<Runtime> {
  return getProcessWide('devRuntime', () => startRuntime());
}
