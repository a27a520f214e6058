/**
 * The regeneration worker: takes stored jobs one page at a time, renders each page through its
 * twin, replaces (or removes) the served file, reconciles the whole site when the render manifest
 * does not match the store, re-indexes the search bundle whose articles changed (today's head on a
 * publish, a job of its own after the pages), compacts the search bundles once a day, and notifies
 * the purge hook. Pages and search run in two lanes (loops) of their own, so a page never waits
 * behind a search build (a compaction indexes a month: docs/performance.md, 2026-11-23 entry on search tiers); the search
 * lane still waits while page jobs are ready or a reconcile runs. With several servers on one
 * database (`store.pages.shared`) a job is claimed with a lease before it runs, each rendered page
 * is stored for the other servers, and the pages they render are copied into this server's folder;
 * search bundles are per server (each re-indexes its own).
 *
 * Each job has its part: `job-claims.ts` runs a job under its claim and lease, `page-lane.ts` renders
 * a page (through the engine in `regenerator.ts`) and writes its file, `search-lane.ts` builds a search
 * bundle or the compaction, `shared-pages.ts` copies the pages other servers rendered, and
 * `manifest-keeper.ts` reconciles (through `reconcile.ts`) and keeps the render manifest. `lanes.ts`
 * runs the two loops; this module builds the parts once and picks each lane's next job from the queues.
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Job } from '../../schemas/misc.ts';
import type { Runtime } from '../runtime.ts';
import type { Logger } from '../log.ts';
import { isAppError } from '../errors.ts';
import { searchDay } from '../clock.ts';
import { isStorageFault, reportStorageFault } from '../storage-faults.ts';
import type { Compressor } from './compress.ts';
import type { FileOutcome } from './files.ts';
import { laneOf, pickJob, type JobTiming, type Lane } from './job-picking.ts';
import { createJobRunner, serverIdentity } from './job-claims.ts';
import { createManifestKeeper } from './manifest-keeper.ts';
import { createPurgeOutbox } from './purge-batch.ts';
import { createPurger } from './purge.ts';
import { followStoredPages, pruneStoredRemovals } from './shared-pages.ts';
import { isSweepPath } from './shared-sweep.ts';
import { COMPACT_JOB, searchJobOf, searchJobPath } from './search-index.ts';
import { closeSearchIndexer, removeSearchLeftovers } from './search-indexer.ts';
import { createRegenerator, type Renderer } from './regenerator.ts';
import { createPageLane, type ReconcileKind } from './page-lane.ts';
import { createLocalSearchQueue, createSearchLane } from './search-lane.ts';
import type { ReconcileProgress } from './reconcile.ts';
import { createActivityLog, type WorkerActivity } from './activity.ts';
import { createLanes, IDLE_POLL_MS } from './lanes.ts';

export type { RenderOutcome, Renderer } from './regenerator.ts';

export type WorkerOptions = {
  /** The served folder (OUT_DIR/client). */
  clientDir: string;
  render: Renderer;
  /** Makes the compressed twins of the files it writes. @default compressBody (in libuv's pool) */
  compress?: Compressor;
  /** Whether an article write is still between its store write and the end of its hooks' enqueuing (the manifest waits for it). */
  writesPending: () => boolean;
  /** A job waits until its path has been quiet this long, so a burst of saves renders once. @default 100 */
  settleMs?: number;
  /** ...but never longer than this after it was queued or last rendered. @default 1000 */
  maxWaitMs?: number;
  /** Today's head search bundle is rebuilt once its job has been quiet this long (other bundles wait 4x). @default 500 */
  searchDebounceMs?: number;
  /** ...but never longer than this after it was queued. @default 8000 */
  searchMaxDelayMs?: number;
  /** Several servers: the highest stored-page sequence the sync before serving copied (later syncs start there). */
  syncedThrough?: number;
  /** Where the worker reports its jobs. @default the runtime's logger */
  log?: Logger;
  /**
   * The render fingerprint of the bundle `render` draws with (OUT_DIR/.build-info.json): served pages
   * drawn by another build are drawn again by a reconcile at start, and a finished reconcile records it.
   * Undefined (a build from before it was recorded): pages are never re-checked for the code.
   */
  build?: string;
  /** Paths a reconcile checks at once (one or two per render thread). @default 1 */
  reconcileConcurrency?: number;
};

export type WorkerStats = {
  jobs: number;
  reconciled: number;
  written: number;
  deleted: number;
  unchanged: number;
  failed: number;
  renderMs: number;
  searchBuilds: number;
  lastSearchMs: number | undefined;
  /** Pages a reconcile (a start on pages older than the store or drawn by another build, an outside rebuild) has still to check. */
  reconcilePending: number;
  /** The running reconcile's pages checked, total and time left (undefined: none runs). */
  reconcile: ReconcileProgress | undefined;
};

export type RegenerationWorker = {
  /** Looks at the queue now instead of at the next poll. */
  wake(): void;
  /** Renders every page again, writing those that changed and removing those that no longer exist. */
  reconcile(reason: string): Promise<void>;
  stats(): WorkerStats;
  /** What it does now and did last (the Publishing panel), its own search jobs, and when each failed job is tried again (epoch ms). */
  activity(): WorkerActivity & { localJobs: Job[]; retryAt: Map<string, number> };
  /** Tries the named failed jobs now: their backoff on this server is cleared and both lanes look at the queue. */
  retry(ids: readonly string[]): void;
  stop(): Promise<void>;
};

/** How often an idle worker (several servers) prunes old stored page removals. */
const PRUNE_EVERY_MS = 3_600_000;

export function startRegenerationWorker(runtime: Runtime, options: WorkerOptions): RegenerationWorker {
  const { store, metrics } = runtime;
  const clientDir = path.resolve(options.clientDir);
  const timing: JobTiming = {
    settleMs: options.settleMs ?? 100,
    maxWaitMs: options.maxWaitMs ?? 1000,
    searchDebounceMs: options.searchDebounceMs ?? 500,
    searchMaxDelayMs: options.searchMaxDelayMs ?? 8000,
    idlePollMs: IDLE_POLL_MS,
  };
  const log = (options.log ?? runtime.log).child({ component: 'publish' });
  const stats: Omit<WorkerStats, 'reconcilePending' | 'reconcile'> = {
    jobs: 0,
    reconciled: 0,
    written: 0,
    deleted: 0,
    unchanged: 0,
    failed: 0,
    renderMs: 0,
    searchBuilds: 0,
    lastSearchMs: undefined,
  };

  const shared = store.pages.shared;
  /** This worker's name in job claims and stored pages (several servers: stable for its DATA_DIR). */
  const owner = shared ? serverIdentity(runtime.config.DATA_DIR) : randomUUID();
  const localJobs = createLocalSearchQueue(() => lanes.wake('search'));
  const imagesDir = path.join(path.resolve(runtime.config.DATA_DIR), 'images');
  let stopFollowing: (() => Promise<void>) | undefined;

  const activity = createActivityLog();
  /** When this worker last pruned old stored removals (0: at its first idle moment). */
  let lastPrune = 0;

  /**
   * Whether `error` is a full (or read-only) disk, reported if it is: a raw one is the served folder's
   * (the worker's own files), the store's arrive reported already (503s). Logged once a minute, not per page.
   */
  function isDiskFull(error: unknown): boolean {
    if (!isStorageFault(error)) return false;
    if (!isAppError(error)) reportStorageFault(runtime, 'served', error);
    return true;
  }
  /** Job bookkeeping the data folder could not store: the queue in memory has it, the folder's next write stores it. */
  const tolerateDiskFull = (error: unknown): void => {
    if (!isDiskFull(error)) throw error;
  };

  /** Queues search jobs (deduplicated by path, run after the pages): bundle names or COMPACT_JOB / REINDEX_ALL_JOB paths. */
  async function queueSearch(bundles: Iterable<string>): Promise<void> {
    const paths = [...new Set(bundles)].map((b) => (b.startsWith('/') ? b : searchJobPath(b)));
    if (shared) localJobs.add(paths);
    else if (paths.length) await store.jobs.enqueue(paths, new Date().toISOString());
  }

  // Never awaited by a job: a hanging PURGE_URL costs the worker nothing (the purger bounds and retries it).
  const purger = runtime.config.PURGE_URL
    ? createPurger({ url: runtime.config.PURGE_URL, siteUrl: runtime.config.SITE_URL, log })
    : undefined;
  const purges = createPurgeOutbox(purger);

  const regenerator = createRegenerator({
    clientDir,
    render: options.render,
    ...(options.compress ? { compress: options.compress } : {}),
    journal: { warn: (message) => log.warn(`[publish] ${message}`) },
  });
  const pageLane = createPageLane({
    regenerator,
    store,
    metrics,
    stats,
    sharedOwner: shared ? owner : undefined,
    purge: (publicPath) => purges.add(publicPath),
    queueSearch: (bundles) => queueSearch(bundles).catch(tolerateDiskFull),
  });
  const searchLane = createSearchLane({ store, clientDir, log, stats });
  const keeper = createManifestKeeper({
    store,
    clientDir,
    siteUrl: runtime.config.SITE_URL,
    build: options.build,
    writesPending: options.writesPending,
    regenerator,
    regenerate,
    queueSearch,
    localSearchJobs: () => localJobs.paths(),
    wakePages: () => lanes.wake('pages'),
    isDiskFull,
    ...(shared ? { sweep: { owner, leaseMs: runtime.config.JOB_LEASE_MS, folders: { clientDir, imagesDir } } } : {}),
    stats,
    metrics,
    log,
  });
  const jobs = createJobRunner({
    store,
    sharedOwner: shared ? owner : undefined,
    leaseMs: runtime.config.JOB_LEASE_MS,
    log,
    metrics,
    stats,
    activity,
    clientDir,
    regenerate: (publicPath) => regenerate(publicPath),
    completeLocal: (job, startedAt) => localJobs.complete(job, startedAt),
    isDiskFull,
    tolerateDiskFull,
  });
  const stopWatchingSpace = runtime.health.onClear((key) => {
    if (!key.startsWith('disk:')) return;
    jobs.spaceFreed();
    lanes.wake();
  });

  /** Runs one job path in its lane; answers what happened to the file (or the search bundles). */
  async function regenerate(publicPath: string, reconcile?: ReconcileKind): Promise<{ outcome: FileOutcome; ms: number }> {
    const isSearch = searchJobOf(publicPath) !== undefined;
    const end = activity.begin(isSearch ? 'search' : 'pages', publicPath);
    try {
      if (isSearch) return await searchLane.run(publicPath);
      const done = await pageLane.render(publicPath, reconcile);
      keeper.pageRendered();
      return done;
    } finally {
      end();
    }
  }

  /** Queue empty: tell the CDN, prune old stored removals (several servers), and keep the manifest. */
  async function onDrained(): Promise<void> {
    purges.flush();
    if (shared && Date.now() - lastPrune >= PRUNE_EVERY_MS) {
      lastPrune = Date.now();
      await pruneStoredRemovals(store, log);
    }
    await keeper.onDrained();
  }

  /** The job `lane` runs next; `queued` counts that lane's jobs, `total` every job of both lanes. */
  async function nextJob(lane: Lane): Promise<{ job: Job | undefined; queued: number; total: number; waitMs: number }> {
    // A shared redraw's batches are claimed by its reconcile (manifest-keeper.ts), not run as jobs.
    const queue = [...(await store.jobs.list(1000)).filter((job) => !isSweepPath(job.path)), ...localJobs.jobs()];
    const picked = pickJob(
      queue,
      timing,
      { now: Date.now(), lastRendered: pageLane.lastRendered, retryAt: jobs.retryAt, reconciling: keeper.pending() > 0 },
      lane,
    );
    return { ...picked, queued: queue.filter((job) => laneOf(job.path) === lane).length, total: queue.length };
  }

  const lanes = createLanes({
    nextJob,
    runJob: (job) => jobs.run(job),
    reconcile: keeper,
    reconcileConcurrency: options.reconcileConcurrency ?? 1,
    flushPurge: () => purges.flush(),
    onDrained,
    // A new day (UTC): yesterday's head folds into its month, as a low-priority job of its own.
    queueDailyCompaction: async () => {
      const compactedDay = searchLane.compactedDay();
      if (compactedDay === undefined || searchDay() === compactedDay) return;
      searchLane.markCompacted(searchDay());
      await queueSearch([COMPACT_JOB]);
    },
    isDiskFull,
    log,
  });

  async function checkOnStart(): Promise<void> {
    keeper.migrate();
    if (shared) {
      log.info({ owner }, `[publish] worker ${owner}: several servers share this database; jobs are claimed, pages copied`);
      // Before the manifest check: pages other servers rendered while this one was down are copied first.
      const onSearchJob = (jobPath: string) => localJobs.add([jobPath]);
      stopFollowing = await followStoredPages(
        store,
        { clientDir, imagesDir },
        {
          owner,
          onSearchJob,
          log: (line) => log.info(line),
          ...(options.syncedThrough === undefined ? {} : { syncedThrough: options.syncedThrough }),
        },
      );
    }
    await keeper.checkOnStart();
    // Index folders left half-written by a process that was killed mid-build.
    await removeSearchLeftovers(clientDir);
    // The bundles today's plan names that are missing (a fresh build, another layout, a new day) are built
    // by a compaction job; with nothing missing it only rewrites periods.json. A reconcile re-indexes
    // every bundle when it ends anyway.
    if (keeper.pending() === 0) await queueSearch([COMPACT_JOB]);
    searchLane.markCompacted(searchDay());
  }

  const running = checkOnStart()
    .catch((error: unknown) => log.error({ err: error }, `[publish] start-up check failed: ${(error as Error).message ?? String(error)}`))
    .then(() => lanes.run());

  return {
    wake: () => lanes.wake(),
    reconcile: (reason) => keeper.reconcile(reason),
    stats: () => ({ ...stats, reconcilePending: keeper.pending(), reconcile: keeper.progress() }),
    activity: () => ({ ...activity.read(), localJobs: localJobs.jobs().map((job) => ({ ...job })), retryAt: new Map(jobs.retryAt) }),
    retry(ids) {
      jobs.clearBackoff(ids);
      lanes.wake();
    },
    async stop() {
      stopWatchingSpace();
      lanes.stop();
      // Both lanes finish the job they are on (a search build too) before the indexer closes.
      await running;
      await keeper.stop();
      await stopFollowing?.();
      purges.flush();
      // Its last try (at most PURGE_TIMEOUT_MS) runs beside the manifest and the indexer's close.
      const purgeStopped = purger?.stop();
      // A manifest left behind the store (a stop between the last job and the pages lane's next look,
      // or with jobs still queued) would make the next start re-render every page (15 minutes at
      // 100,000 articles, or a full build under npm start) to find them all unchanged. The stored
      // queue survives the stop, so the manifest may name this version with jobs left in it.
      await keeper.recordDrainedState('kept').catch((error: unknown) => log.error(`[publish] render manifest at stop: ${String(error)}`));
      await closeSearchIndexer();
      await purgeStopped;
    },
  };
}
