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
 * What a job does is in its part: `page-lane.ts` (a page, through the engine in `regenerator.ts`),
 * `search-lane.ts` (a search bundle or the compaction) and `reconcile.ts`; this module holds the queue,
 * the two loops, the claims and leases, and the render manifest.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Job } from '../../schemas/misc.ts';
import type { Runtime } from '../runtime.ts';
import { errorMessage, logOncePerMinute, type Logger } from '../log.ts';
import { serviceUnavailableOf } from '../errors.ts';
import type { Compressor } from './compress.ts';
import type { FileOutcome } from './files.ts';
import { manifestFileFor, manifestMatches, readRenderManifest, saveRenderManifest, type RenderManifest } from './manifest.ts';
import { laneOf, pickJob, retryDelayMs, type JobTiming, type Lane } from './job-picking.ts';
import { createPurgeBatch } from './purge-batch.ts';
import { createPurger } from './purge.ts';
import { followStoredPages } from './shared-pages.ts';
import { searchDay } from '../clock.ts';
import { isAppError } from '../errors.ts';
import { isStorageFault, reportStorageFault } from '../storage-faults.ts';
import {
  closeSearchIndexer,
  COMPACT_JOB,
  REINDEX_ALL_JOB,
  removeSearchLeftovers,
  searchIndexerVersion,
  searchJobOf,
  searchJobPath,
} from './search-index.ts';
import { createRegenerator, type Renderer } from './regenerator.ts';
import { createPageLane, type ReconcileKind } from './page-lane.ts';
import { createSearchLane } from './search-lane.ts';
import { createReconcile, type ReconcileProgress } from './reconcile.ts';
import {
  migrateRenderState,
  pagesDrawnWith,
  readRenderStateHeader,
  RENDER_STATE_FILE,
  updateRenderStateHeaderAsync,
} from './render-state.ts';
import { createActivityLog, describeJobError, type WorkerActivity } from './activity.ts';

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

const IDLE_POLL_MS = 1000;
/** A lane that met a database outage looks again after this long, doubling to the last: back within 2 s of its return. */
const OUTAGE_BACKOFF_MS = [250, 500, 1000, 2000] as const;
/** How soon a job that met a full disk is tried again at the latest (and at once when the disk takes writes again). */
const STORAGE_RETRY_MS = 5000;
/** How often an idle worker checks whether another process (the rebuild) replaced the manifest. */
const MANIFEST_CHECK_MS = 15_000;
/** How soon a job another server holds is looked at again. */
const CLAIMED_RETRY_MS = 200;
/**
 * Several servers: a stored page removal (tombstone) is kept this long, then pruned, so the table
 * holds one row per live page plus a week of removals. A server away longer misses the removal; its
 * render manifest then names an older article version, and the reconcile at start deletes the file.
 */
export const PAGE_TOMBSTONE_MAX_AGE_MS = 7 * 86_400_000;
/** How often an idle worker prunes old removals (any server may; the delete is idempotent). */
const PRUNE_EVERY_MS = 3_600_000;

/** The id kept in `DATA_DIR/server-id`, written once (atomically) on first start. */
function serverIdentity(dataDir: string): string {
  const file = path.join(path.resolve(dataDir), 'server-id');
  try {
    const id = fs.readFileSync(file, 'utf8').trim();
    if (id) return id;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const id = randomUUID();
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, `${id}\n`);
  fs.renameSync(temp, file);
  return id;
}

/**
 * A lane's sleep, cut short by `wake()`. A wake while the lane is busy is kept for its next sleep,
 * which then returns at once: work queued between the lane's look at the queue and its sleep is not
 * left for the next poll.
 */
function createSleeper(): { sleep: (ms: number) => Promise<void>; wake: () => void } {
  let wake: (() => void) | undefined;
  let woken = false;
  return {
    sleep: (ms) =>
      new Promise<void>((resolve) => {
        if (woken) {
          woken = false;
          resolve();
          return;
        }
        const done = () => {
          clearTimeout(timer);
          wake = undefined;
          resolve();
        };
        const timer = setTimeout(done, ms);
        wake = done;
      }),
    wake: () => {
      if (wake) wake();
      else woken = true;
    },
  };
}

export function startRegenerationWorker(runtime: Runtime, options: WorkerOptions): RegenerationWorker {
  const { store } = runtime;
  const clientDir = path.resolve(options.clientDir);
  const manifestFile = manifestFileFor(clientDir);
  const siteUrl = runtime.config.SITE_URL;
  const timing: JobTiming = {
    settleMs: options.settleMs ?? 100,
    maxWaitMs: options.maxWaitMs ?? 1000,
    searchDebounceMs: options.searchDebounceMs ?? 500,
    searchMaxDelayMs: options.searchMaxDelayMs ?? 8000,
    idlePollMs: IDLE_POLL_MS,
  };
  const log = (options.log ?? runtime.log).child({ component: 'publish' });
  const { metrics } = runtime;
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

  /**
   * This worker's name in job claims and stored pages: stable for its DATA_DIR, which one live
   * process holds at a time (the lock), so a server restarted after a crash takes its own claimed
   * jobs back at once instead of waiting out their lease. Another server still waits for the lease.
   */
  const shared = store.pages.shared;
  const owner = shared ? serverIdentity(runtime.config.DATA_DIR) : randomUUID();
  const leaseMs = runtime.config.JOB_LEASE_MS;
  /** Search work of this server alone (several servers: each indexes its own folder), by job path. */
  const localJobs = new Map<string, Job>();
  let localSeq = 0;
  let stopFollowing: (() => Promise<void>) | undefined;

  let stopped = false;
  /** Each lane's sleep, and how to cut it short. */
  const sleepers = { pages: createSleeper(), search: createSleeper() };
  /** Wakes one lane, or both (new jobs of either kind may be queued). */
  const wakeUp = (lane?: Lane) => {
    for (const name of lane ? [lane] : (['pages', 'search'] as const)) sleepers[name].wake();
  };
  const retryAt = new Map<string, number>();
  const activity = createActivityLog();
  /** Something was rendered since the manifest was last written. */
  let manifestStale = false;
  /** The manifest as this worker last wrote or accepted it; a different one on disk came from elsewhere. */
  let knownManifest: string | undefined;
  let lastManifestCheck = Date.now();
  /** The article version the manifest on disk names, once this worker knows the pages match it. */
  let writtenVersion: number | undefined;
  /** The search jobs the manifest on disk names as left to run (a stop's, see recordDrainedState). */
  let writtenSearchJobs: string[] = [];
  const purgeBatch = createPurgeBatch();
  /** When this worker last pruned old stored removals (0: at its first idle moment). */
  let lastPrune = 0;
  /** Jobs that failed on a full disk: tried again as soon as the disk takes writes (runtime.health clears it). */
  const waitingForSpace = new Set<string>();
  const stopWatchingSpace = runtime.health.onClear((key) => {
    if (!key.startsWith('disk:')) return;
    for (const id of waitingForSpace) retryAt.delete(id);
    waitingForSpace.clear();
    wakeUp();
  });

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
    if (shared) queueLocal(paths);
    else if (paths.length) await store.jobs.enqueue(paths, new Date().toISOString());
  }

  /** Queues search jobs for this server only (coalesced by path, as the stored queue does). */
  function queueLocal(paths: readonly string[]): void {
    const now = new Date().toISOString();
    for (const jobPath of paths) {
      const existing = localJobs.get(jobPath);
      if (existing) existing.queuedAt = now;
      else localJobs.set(jobPath, { id: `local-${++localSeq}`, path: jobPath, createdAt: now, queuedAt: now, attempts: 0 });
    }
    if (paths.length) wakeUp('search');
  }

  // Never awaited by a job: a hanging PURGE_URL costs the worker nothing (the purger bounds and retries it).
  const purger = runtime.config.PURGE_URL
    ? createPurger({ url: runtime.config.PURGE_URL, siteUrl: runtime.config.SITE_URL, log })
    : undefined;
  function sendPurgeOf(paths: string[]): void {
    purger?.send(paths);
  }
  const flushPurge = () => sendPurgeOf(purgeBatch.take());

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
    purge: (publicPath) => {
      const full = purgeBatch.add(publicPath);
      if (full) sendPurgeOf(full);
    },
    queueSearch: (bundles) => queueSearch(bundles).catch(tolerateDiskFull),
  });
  const searchLane = createSearchLane({ store, clientDir, log, stats });
  /** What the served pages were drawn with, as the render state says (undefined: not known). */
  let drawnWith: string | undefined;
  /** What the running reconcile checks for; an article page it removed leaves a bundle to index again. */
  let reconcileKind: ReconcileKind = 'data';
  let reconcileRemovedArticle = false;
  const reconciler = createReconcile({
    check: async (publicPath) => {
      const { outcome } = await regenerate(publicPath, reconcileKind);
      stats.reconciled++;
      if (outcome === 'deleted' && /^\/article\/[^/]+$/.test(publicPath)) reconcileRemovedArticle = true;
      return outcome;
    },
    isDiskFull,
    onFailed: () => {
      stats.failed++;
      metrics.pagesRendered.inc({ outcome: 'failed' });
    },
    // Every page is current. After a new build only the bundles of pages whose text changed were queued (a new
    // footer indexes nothing); otherwise, or with another Pagefind, every bundle is indexed again (and those without articles dropped).
    onDone: async ({ failed }) => {
      const indexer = readRenderStateHeader(manifestFile).rebuild?.indexer;
      if (reconcileKind === 'data' || reconcileRemovedArticle || indexer !== searchIndexerVersion()) await queueSearch([REINDEX_ALL_JOB]);
      else log.info('[publish] search index kept: only the bundles of pages whose text changed are indexed again');
      // Every page was drawn by this build (a page that failed keeps the old one's: the next start tries again).
      if (options.build !== undefined && failed === 0 && drawnWith !== options.build) {
        const build = options.build;
        await updateRenderStateHeaderAsync(manifestFile, (header) => ({ ...header, drawnWith: build }));
        drawnWith = build;
        log.info({ build }, `[publish] every page is drawn by this build (${build})`);
      }
    },
    log,
  });

  /** Runs one job path in its lane; answers what happened to the file (or the search bundles). */
  async function regenerate(publicPath: string, reconcile?: ReconcileKind): Promise<{ outcome: FileOutcome; ms: number }> {
    const isSearch = searchJobOf(publicPath) !== undefined;
    const end = activity.begin(isSearch ? 'search' : 'pages', publicPath);
    try {
      if (isSearch) return await searchLane.run(publicPath);
      const done = await pageLane.render(publicPath, reconcile);
      manifestStale = true;
      return done;
    } finally {
      end();
    }
  }

  /** Completes a job of this server's own search queue, unless it was queued again meanwhile. */
  function completeLocal(job: Job, startedAt: string): void {
    const current = localJobs.get(job.path);
    if (current?.id === job.id && current.queuedAt <= startedAt) localJobs.delete(job.path);
    else if (current) current.attempts = 0;
  }

  async function runJob(job: Job): Promise<void> {
    // One millisecond early, so a save landing in the same millisecond as the start re-queues the job.
    const startedAt = new Date(Date.now() - 1).toISOString();
    const local = job.id.startsWith('local-');
    if (shared && !local && !(await store.jobs.claim(job.id, owner, Date.now() + leaseMs, Date.now()))) {
      // Another server is on it: look again shortly (it is gone once done; a killed server's lease runs out).
      retryAt.set(job.id, Date.now() + CLAIMED_RETRY_MS);
      return;
    }
    // Heartbeat: work that outlasts part of the lease (a search compaction) extends it while it runs,
    // so no other server takes the job over and does it twice; a killed server stops renewing.
    // Every quarter of the lease (1 s of the default 4 s), so three renewals may go astray before it runs out.
    let beat: Promise<unknown> = Promise.resolve();
    const heartbeat =
      shared && !local
        ? setInterval(
            () => {
              beat = store.jobs
                .claim(job.id, owner, Date.now() + leaseMs, Date.now())
                .then((held) => held || log.warn({ path: job.path }, `[publish] ${job.path}: the claim was lost while running`))
                .catch((error: unknown) =>
                  logOncePerMinute(
                    log,
                    'lease-renewal',
                    { path: job.path, err: errorMessage(error) },
                    `[publish] ${job.path}: renewing the claim failed: ${errorMessage(error)}`,
                  ),
                );
            },
            Math.max(50, Math.floor(leaseMs / 4)),
          )
        : undefined;
    // Before the claim is given up: a renewal landing after it would claim the job again.
    const stopHeartbeat = async () => {
      clearInterval(heartbeat);
      await beat;
    };
    const isSearch = searchJobOf(job.path) !== undefined;
    // A search build takes seconds: its start is worth a (debug) line, its end is logged anyway.
    if (isSearch) log.debug({ jobId: job.id, path: job.path }, `[publish] ${job.path} started`);
    try {
      const { outcome, ms } = await regenerate(job.path).finally(stopHeartbeat);
      if (isSearch) metrics.searchIndexSeconds.observe(ms / 1000);
      if (isSearch) activity.noteSearch(ms);
      else activity.notePage(job.path, outcome, ms);
      if (local) completeLocal(job, startedAt);
      else await store.jobs.complete(job.id, startedAt).catch(tolerateDiskFull);
      // Search work done here in the stored queue: the other servers re-index their own folders too.
      if (shared && !local && searchJobOf(job.path)) await store.pages.put(job.path, undefined, owner);
      retryAt.delete(job.id);
      stats.jobs++;
      log.info(
        { jobId: job.id, path: job.path, outcome, ms: Math.round(ms * 10) / 10 },
        `[publish] ${job.path} ${outcome} in ${ms.toFixed(1)} ms`,
      );
    } catch (error) {
      // The database went away mid-job: not the page's fault. The job stays queued (and ours until its
      // lease runs out), and the lane backs off until the database answers again.
      if (serviceUnavailableOf(error)) throw error;
      stats.failed++;
      if (!isSearch) metrics.pagesRendered.inc({ outcome: 'failed' });
      const message = describeJobError(error, clientDir);
      if (local) {
        job.attempts++;
        job.lastError = message;
      } else await store.jobs.fail(job.id, message).catch(tolerateDiskFull);
      if (isDiskFull(error)) {
        // The old file stays served; the job waits for space (the fault is logged once a minute, not per try).
        waitingForSpace.add(job.id);
        retryAt.set(job.id, Date.now() + Math.min(STORAGE_RETRY_MS, retryDelayMs(job.attempts)));
        return;
      }
      const delay = retryDelayMs(job.attempts);
      retryAt.set(job.id, Date.now() + delay);
      log.error(
        { jobId: job.id, path: job.path, attempt: job.attempts + 1, err: message },
        `[publish] ${job.path} failed (attempt ${job.attempts + 1}, retry in ${Math.round(delay / 1000)} s): ${message}`,
      );
    } finally {
      await stopHeartbeat();
    }
  }

  async function runReconcileStep(): Promise<void> {
    // A full disk: the page stays first and the lane waits for space (woken when the disk takes writes).
    if ((await reconciler.step(options.reconcileConcurrency ?? 1)) === 'no-space') await sleepers.pages.sleep(STORAGE_RETRY_MS);
  }

  async function currentState(): Promise<{ id: string; version: number }> {
    return { id: store.id, version: await store.articles.version() };
  }

  /**
   * With nothing queued, pending or reconciling, writes the render manifest for the store's version if
   * it is not written yet. Answers 'written', the store's state when the manifest already named it, or
   * undefined when work is left.
   *
   * `queued: 'kept'` (a stop) accepts jobs still queued: those in the stored queue stay there, and
   * this server's own search jobs (`localJobs`, PostgreSQL) are named in the manifest. It then means
   * the pages match that version apart from those jobs, which the next start runs. A reconcile or a
   * write not yet queued still leave it as it was.
   */
  async function recordDrainedState(queued: 'none' | 'kept' = 'none'): Promise<{ id: string; version: number } | 'written' | undefined> {
    if (options.writesPending() || reconciler.pending() > 0) return undefined;
    if (localJobs.size > 0 && queued === 'none') return undefined;
    const state = await currentState();
    // Re-check after the await: a write may have queued jobs meanwhile.
    if (options.writesPending()) return undefined;
    const left = await store.jobs.size();
    if (left > 0 && queued === 'none') return undefined;
    const searchJobs = [...localJobs.keys()].sort();
    // Every write either queued jobs (done, or kept in the queues) or changed nothing readers see (a
    // draft edit), so the pages match the store at this version apart from the jobs left.
    if (!manifestStale && writtenVersion === state.version && searchJobs.join('\n') === writtenSearchJobs.join('\n')) return state;
    const kept = left + searchJobs.length;
    if (kept > 0) log.info({ kept }, `[publish] stopping with ${kept} regeneration job(s) queued: the next start runs them`);
    const manifest: RenderManifest = {
      storeId: state.id,
      version: state.version,
      renderedAt: new Date().toISOString(),
      by: 'server',
      siteUrl,
      ...(searchJobs.length ? { searchJobs } : {}),
    };
    await saveRenderManifest(manifestFile, manifest);
    knownManifest = JSON.stringify(manifest);
    writtenVersion = state.version;
    writtenSearchJobs = searchJobs;
    manifestStale = false;
    return 'written';
  }

  /** Queue empty: record what the pages were rendered from, tell the CDN, and look for outside rebuilds. */
  async function onDrained(): Promise<void> {
    flushPurge();
    if (shared && Date.now() - lastPrune >= PRUNE_EVERY_MS) {
      lastPrune = Date.now();
      const pruned = await store.pages.pruneRemovals(Date.now() - PAGE_TOMBSTONE_MAX_AGE_MS);
      if (pruned)
        log.info({ pruned }, `[publish] pruned ${pruned} stored page removals older than ${PAGE_TOMBSTONE_MAX_AGE_MS / 86_400_000} days`);
    }
    const state = await recordDrainedState();
    if (!state || state === 'written') return;
    if (Date.now() - lastManifestCheck < MANIFEST_CHECK_MS) return;
    lastManifestCheck = Date.now();
    const onDisk = readRenderManifest(manifestFile);
    if (JSON.stringify(onDisk) !== knownManifest) {
      knownManifest = JSON.stringify(onDisk);
      // A rebuild swapped in pages rendered from an older snapshot: bring them up to date.
      if (manifestMatches(onDisk, state, siteUrl)) writtenVersion = state.version;
      else await reconcile('the pages on disk were replaced by an older build');
    }
  }

  async function reconcile(reason: string, kind: ReconcileKind = 'data'): Promise<void> {
    // One joining a running reconcile: a reconcile of the data among them indexes everything when it ends.
    if (reconciler.pending() === 0) {
      reconcileKind = kind;
      reconcileRemovedArticle = false;
    } else if (kind === 'data') reconcileKind = 'data';
    const plan = await regenerator.planAll(store);
    reconciler.start(reason, plan.paths, plan.marks);
    wakeUp('pages');
  }

  /** The job `lane` runs next; `queued` counts that lane's jobs, `total` every job of both lanes. */
  async function nextJob(lane: Lane): Promise<{ job: Job | undefined; queued: number; total: number; waitMs: number }> {
    const jobs = [...(await store.jobs.list(1000)), ...localJobs.values()];
    const picked = pickJob(
      jobs,
      timing,
      { now: Date.now(), lastRendered: pageLane.lastRendered, retryAt, reconciling: reconciler.pending() > 0 },
      lane,
    );
    return { ...picked, queued: jobs.filter((job) => laneOf(job.path) === lane).length, total: jobs.length };
  }

  /**
   * The pages lane: page jobs by urgency, then reconcile steps. Purges go out once no page job is
   * queued; the manifest is written (onDrained) once no job of either lane is, as with one loop, so
   * a written manifest still means the search bundles are done too.
   */
  /**
   * A lane's answer to an error that escaped a job: a database outage is logged once a minute and
   * looked at again soon (backing off while it lasts), anything else logged and retried at the next poll.
   */
  async function pauseAfter(lane: Lane, error: unknown, outages: number): Promise<void> {
    if (serviceUnavailableOf(error)) {
      logOncePerMinute(
        log,
        'store-unavailable',
        { err: errorMessage(error) },
        `[publish] the store is unavailable (${errorMessage(error)}); queued jobs wait for it and resume by themselves`,
      );
      await sleepers[lane].sleep(OUTAGE_BACKOFF_MS[Math.min(outages, OUTAGE_BACKOFF_MS.length - 1)]);
      return;
    }
    // A full disk is reported once a minute where it is met (isDiskFull), not per turn of the lane.
    if (!isDiskFull(error))
      log.error({ err: error }, `[publish] ${lane === 'pages' ? 'worker' : 'search worker'} error: ${errorMessage(error)}`);
    await sleepers[lane].sleep(IDLE_POLL_MS);
  }

  async function pagesLoop(): Promise<void> {
    /** Whether this lane worked since it last found nothing to do (the search lane may be waiting for it). */
    let busy = false;
    /** Outages met in a row (the backoff's step). */
    let outages = 0;
    while (!stopped) {
      try {
        const { job, queued, total, waitMs } = await nextJob('pages');
        outages = 0;
        if (job) {
          busy = true;
          await runJob(job);
          continue;
        }
        if (reconciler.pending() > 0) {
          busy = true;
          await runReconcileStep();
          continue;
        }
        // Search jobs held back while pages were ready may run now.
        if (busy) wakeUp('search');
        busy = false;
        if (queued === 0) flushPurge();
        if (total === 0) await onDrained();
        if (reconciler.pending() > 0) continue;
        await sleepers.pages.sleep(Math.max(1, waitMs));
      } catch (error) {
        await pauseAfter('pages', error, serviceUnavailableOf(error) ? outages++ : 0);
      }
    }
  }

  /** The search lane: bundle re-indexes and compactions, one at a time, while no page job is ready. */
  async function searchLoop(): Promise<void> {
    let outages = 0;
    while (!stopped) {
      try {
        // A new day (UTC): yesterday's head folds into its month, as a low-priority job of its own.
        const compactedDay = searchLane.compactedDay();
        if (compactedDay !== undefined && searchDay() !== compactedDay) {
          searchLane.markCompacted(searchDay());
          await queueSearch([COMPACT_JOB]);
        }
        const { job, waitMs } = await nextJob('search');
        outages = 0;
        if (job) {
          await runJob(job);
          // The pages lane writes the manifest once both lanes are drained: let it look now.
          wakeUp('pages');
          continue;
        }
        await sleepers.search.sleep(Math.max(1, waitMs));
      } catch (error) {
        await pauseAfter('search', error, serviceUnavailableOf(error) ? outages++ : 0);
      }
    }
  }

  async function checkOnStart(): Promise<void> {
    // A folder from before render-state.json: its manifest and page records move in, so nothing is re-checked for the upgrade.
    if (migrateRenderState(clientDir))
      log.info(`[publish] moved the render manifest, page records and search day tier into ${RENDER_STATE_FILE}`);
    if (shared) {
      log.info({ owner }, `[publish] worker ${owner}: several servers share this database; jobs are claimed, pages copied`);
      // Before the manifest check: pages other servers rendered while this one was down are copied first.
      const imagesDir = path.join(path.resolve(runtime.config.DATA_DIR), 'images');
      const onSearchJob = (jobPath: string) => queueLocal([jobPath]);
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
    const state = await currentState();
    const manifest = readRenderManifest(manifestFile);
    knownManifest = JSON.stringify(manifest);
    drawnWith = pagesDrawnWith(readRenderStateHeader(manifestFile));
    if (manifestMatches(manifest, state, siteUrl)) {
      writtenVersion = state.version;
      // Search jobs a stop left: run now; the manifest loses them once the queues run empty.
      writtenSearchJobs = manifest!.searchJobs ?? [];
      await queueSearch(writtenSearchJobs.filter((jobPath) => searchJobOf(jobPath)));
      // A deploy: the pages match the store but were drawn by the old build. They stay served meanwhile.
      if (options.build !== undefined && drawnWith !== undefined && drawnWith !== options.build)
        await reconcile(`the pages were drawn by another build (${drawnWith}, this one is ${options.build})`, 'build');
    } else {
      const why = !manifest
        ? 'no render manifest beside the served pages'
        : manifest.storeId !== state.id
          ? 'the pages were rendered from another data folder'
          : manifest.version !== state.version
            ? `the pages were rendered from article version ${manifest.version}, the store is at ${state.version}`
            : `the pages were rendered for SITE_URL ${manifest.siteUrl}, not ${siteUrl}`;
      await reconcile(why);
    }
    // Index folders left half-written by a process that was killed mid-build.
    for (const entry of fs.readdirSync(clientDir)) {
      if (entry.startsWith('.pagefind-')) fs.rmSync(path.join(clientDir, entry), { recursive: true, force: true });
    }
    await removeSearchLeftovers(clientDir);
    // The bundles today's plan names that are missing (a fresh build, another layout, a new day) are built
    // by a compaction job; with nothing missing it only rewrites periods.json. A reconcile re-indexes
    // every bundle when it ends anyway.
    if (reconciler.pending() === 0) await queueSearch([COMPACT_JOB]);
    searchLane.markCompacted(searchDay());
  }

  const running = checkOnStart()
    .catch((error: unknown) => log.error({ err: error }, `[publish] start-up check failed: ${(error as Error).message ?? String(error)}`))
    .then(() => Promise.all([pagesLoop(), searchLoop()]));

  return {
    wake: () => wakeUp(),
    reconcile,
    stats: () => ({ ...stats, reconcilePending: reconciler.pending(), reconcile: reconciler.progress() }),
    activity: () => ({ ...activity.read(), localJobs: [...localJobs.values()].map((job) => ({ ...job })), retryAt: new Map(retryAt) }),
    retry(ids) {
      for (const id of ids) {
        retryAt.delete(id);
        waitingForSpace.delete(id);
      }
      wakeUp();
    },
    async stop() {
      stopped = true;
      stopWatchingSpace();
      wakeUp();
      // Both lanes finish the job they are on (a search build too) before the indexer closes.
      await running;
      await stopFollowing?.();
      flushPurge();
      // Its last try (at most PURGE_TIMEOUT_MS) runs beside the manifest and the indexer's close.
      const purgeStopped = purger?.stop();
      // A manifest left behind the store (a stop between the last job and the pages lane's next look,
      // or with jobs still queued) would make the next start re-render every page (15 minutes at
      // 100,000 articles, or a full build under npm start) to find them all unchanged. The stored
      // queue survives the stop, so the manifest may name this version with jobs left in it.
      await recordDrainedState('kept').catch((error: unknown) => log.error(`[publish] render manifest at stop: ${String(error)}`));
      await closeSearchIndexer();
      await purgeStopped;
    },
  };
}
