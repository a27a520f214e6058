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
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Job } from '../../schemas/misc.ts';
import type { Runtime } from '../runtime.ts';
import { errorMessage, logOncePerMinute, type Logger } from '../log.ts';
import { serviceUnavailableOf } from '../errors.ts';
import { deleteServedFile, writeFileAtomic, type FileOutcome } from './files.ts';
import type { Compressor } from './compress.ts';
import { createRenderJournal } from './render-journal.ts';
import { manifestFileFor, manifestMatches, readRenderManifest, writeRenderManifest, type RenderManifest } from './manifest.ts';
import { laneOf, pickJob, retryDelayMs, type JobTiming, type Lane } from './job-picking.ts';
import { fileForPath, isRegenerablePath, listPublicPaths, listRenderedPaths, listSearchBundles } from './paths.ts';
import { createPurgeBatch } from './purge-batch.ts';
import { createPurger } from './purge.ts';
import { followStoredPages } from './shared-pages.ts';
import { searchDay } from '../clock.ts';
import { isAppError } from '../errors.ts';
import { isStorageFault, reportStorageFault } from '../storage-faults.ts';
import {
  bundleOf,
  bundleRange,
  isBundleOfDay,
  isDayTier,
  planDayTier,
  staleDayBundles,
  buildSearchPeriods,
  closeSearchIndexer,
  COMPACT_JOB,
  readPeriodsFile,
  REINDEX_ALL_JOB,
  removeSearchLeftovers,
  searchJobOf,
  searchJobPath,
  syncSearchBundles,
} from './search-index.ts';

/** A page rendered for the current data, or word that it does not exist (its file is removed). */
export type RenderOutcome = { kind: 'page'; body: Uint8Array; input?: string } | { kind: 'missing' };
export type Renderer = (publicPath: string) => Promise<RenderOutcome>;

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
  /** Pages a reconcile (a start on pages older than the store, or an outside rebuild) has still to check. */
  reconcilePending: number;
};

export type RegenerationWorker = {
  /** Looks at the queue now instead of at the next poll. */
  wake(): void;
  /** Renders every page again, writing those that changed and removing those that no longer exist. */
  reconcile(reason: string): Promise<void>;
  stats(): WorkerStats;
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
  const journal = createRenderJournal(clientDir);
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
  const stats: Omit<WorkerStats, 'reconcilePending'> = {
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
  const lastRendered = new Map<string, number>();
  const retryAt = new Map<string, number>();
  let reconcileQueue: string[] = [];
  let reconcileSummary: { reason: string; started: number; total: number; counts: Record<FileOutcome, number> } | undefined;
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

  /** The day the last compaction ran for: a new day queues one (the head folds into its month). */
  let compactedDay: string | undefined;

  /** The published slugs of one bundle, read by date range (bounded by the bundle, not the archive). */
  async function slugsOf(bundle: string): Promise<string[]> {
    const { from, to } = bundleRange(bundle);
    const filter = { statuses: ['published'] as const, dateFrom: from, dateTo: to };
    const total = await store.articles.count(filter);
    return total === 0 ? [] : (await store.articles.list(filter, { offset: 0, limit: total }, 'recent')).map((a) => a.slug);
  }

  /**
   * Re-indexes what changed in today's tier: the head (every publish changes it) and any full block
   * that is new, holds other articles than it was built from, or has a page rendered since (see
   * staleDayBundles); blocks that went away are unlisted. So a publish indexes at most HEAD_MAX pages
   * (twice that when the head fills), whatever the archive or the day holds.
   */
  async function runDayTier(today: string): Promise<{ outcome: FileOutcome; ms: number }> {
    const started = performance.now();
    const { from, to } = bundleRange(`head-${today}`);
    const filter = { statuses: ['published'] as const, dateFrom: from, dateTo: to };
    const total = await store.articles.count(filter);
    const day = total === 0 ? [] : await store.articles.list(filter, { offset: 0, limit: total }, 'recent');
    const tier = new Map([...planDayTier(day, today)].map(([name, members]) => [name, members.map((a) => a.slug)]));
    const stale = new Map((await staleDayBundles(clientDir, tier)).map((name) => [name, tier.get(name)!]));
    // The head when the day has no article left: indexing it with none removes it.
    if (!tier.has(`head-${today}`)) stale.set(`head-${today}`, []);
    const listed = await readPeriodsFile(clientDir);
    const gone = listed.filter((name) => isDayTier(name, today) && !tier.has(name) && name !== `head-${today}`);
    const results = await buildSearchPeriods(clientDir, stale, gone);
    for (const result of results) logSearchBuild(result, result.period);
    const ms = performance.now() - started;
    stats.searchBuilds += results.length;
    stats.lastSearchMs = ms;
    return { outcome: results.some((r) => !r.removed) ? 'written' : 'deleted', ms };
  }

  /** Runs one search job: re-index a bundle in place, or compact / re-index the whole plan for today. */
  async function runSearchJob(jobPath: string): Promise<{ outcome: FileOutcome; ms: number }> {
    const job = searchJobOf(jobPath)!;
    const today = searchDay();
    // Today's head or one of its blocks: the tier is re-planned and what changed in it re-indexed.
    if (job.kind === 'bundle' && isDayTier(job.bundle, today)) return runDayTier(today);
    if (job.kind === 'bundle') {
      const listed = await readPeriodsFile(clientDir);
      // Today's head, or a listed bundle of today's plan (an old article edited): re-indexed in place.
      // Anything else (yesterday's head, a month the compaction has not built) is the compaction's work:
      // re-indexing it alone could list an article in two bundles.
      if (job.bundle === `head-${today}` || (listed.includes(job.bundle) && isBundleOfDay(job.bundle, today))) {
        const [result] = await buildSearchPeriods(clientDir, new Map([[job.bundle, await slugsOf(job.bundle)]]));
        stats.searchBuilds++;
        stats.lastSearchMs = result!.ms;
        logSearchBuild(result!, job.bundle);
        return { outcome: result!.removed ? 'deleted' : 'written', ms: result!.ms };
      }
    }
    // Compaction: the plan for today, missing bundles built unseen, then one periods.json swap.
    const plan = await listSearchBundles(store, today);
    const synced = await syncSearchBundles(clientDir, plan, job.kind === 'all' ? 'all' : 'missing', 'later');
    compactedDay = today;
    stats.searchBuilds += synced.results.length;
    for (const result of synced.results) logSearchBuild(result, result.period);
    log.info(
      { built: synced.results.length, removed: synced.removed, ms: Math.round(synced.ms) },
      `[publish] search bundles compacted for ${today} in ${synced.ms.toFixed(0)} ms: ${synced.results.length} built, ${synced.removed.length} removed (${synced.removed.join(', ') || 'none'}), now ${synced.periods.join(', ')}`,
    );
    return { outcome: synced.results.length || synced.removed.length ? 'written' : 'unchanged', ms: synced.ms };
  }

  /** One line per search bundle indexed; the job's own time goes to the metrics when it ends. */
  function logSearchBuild(result: { pages: number; ms: number }, bundle: string): void {
    log.info(
      { bundle, pages: result.pages, ms: Math.round(result.ms) },
      `[publish] search index rebuilt: ${result.pages} pages in ${result.ms.toFixed(0)} ms (bundle ${bundle})`,
    );
  }

  // Never awaited by a job: a hanging PURGE_URL costs the worker nothing (the purger bounds and retries it).
  const purger = runtime.config.PURGE_URL
    ? createPurger({ url: runtime.config.PURGE_URL, siteUrl: runtime.config.SITE_URL, log })
    : undefined;
  function sendPurgeOf(paths: string[]): void {
    purger?.send(paths);
  }
  const flushPurge = () => sendPurgeOf(purgeBatch.take());

  /** Renders one path and brings its file in line; answers what happened to the file. */
  async function regenerate(publicPath: string, inReconcile = false): Promise<{ outcome: FileOutcome; ms: number }> {
    if (searchJobOf(publicPath)) return runSearchJob(publicPath);
    if (!isRegenerablePath(publicPath)) throw new Error(`Refusing to regenerate ${publicPath}`);
    const started = performance.now();
    const rendered = await options.render(publicPath);
    const file = fileForPath(clientDir, publicPath);
    const outcome =
      rendered.kind === 'page' ? await writeFileAtomic(file, rendered.body, options.compress) : await deleteServedFile(file, clientDir);
    if (outcome === 'written' && rendered.kind === 'page' && rendered.input !== undefined) {
      // Only spares the next rebuild a render: a failure here costs that render, never the page.
      await journal
        .record(publicPath, rendered.input, file)
        .catch((error: unknown) => log.warn(`[publish] render journal: ${String(error)}`));
    }
    // Stored before the job completes: a server killed in between leaves the job, and the next one stores it.
    if (shared && (outcome === 'written' || outcome === 'deleted' || (outcome === 'absent' && !inReconcile))) {
      await store.pages.put(publicPath, rendered.kind === 'page' ? rendered.body : undefined, owner);
    }
    const ms = performance.now() - started;
    lastRendered.set(publicPath, Date.now());
    stats.renderMs += ms;
    metrics.pagesRendered.inc({ outcome });
    metrics.renderSeconds.observe(ms / 1000);
    manifestStale = true;
    if (outcome === 'written' || outcome === 'deleted') {
      stats[outcome]++;
      const full = purgeBatch.add(publicPath);
      if (full) sendPurgeOf(full);
      // The article's bundle must read this page: queue it (again) now that the file is on disk.
      // (A reconcile re-indexes every bundle when it ends.)
      if (outcome === 'written' && publicPath.startsWith('/article/') && !inReconcile) {
        const article = await store.articles.getBySlug(decodeURIComponent(publicPath.slice('/article/'.length)));
        if (article?.status === 'published') await queueSearch([bundleOf(article, searchDay())]).catch(tolerateDiskFull);
      }
    } else if (outcome === 'unchanged') {
      stats.unchanged++;
    }
    return { outcome, ms };
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
      const message = (error as Error).message ?? String(error);
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
    const publicPath = reconcileQueue.shift()!;
    const summary = reconcileSummary!;
    try {
      const { outcome } = await regenerate(publicPath, true);
      summary.counts[outcome]++;
      stats.reconciled++;
    } catch (error) {
      if (serviceUnavailableOf(error)) {
        // The database went away: the page is checked again once it is back, not skipped.
        reconcileQueue.unshift(publicPath);
        throw error;
      }
      // The page keeps its old file; it will be retried by the next reconcile or by a job.
      stats.failed++;
      metrics.pagesRendered.inc({ outcome: 'failed' });
      if (isDiskFull(error)) {
        // A full disk: the page goes back to the front and the lane waits for space (woken when the disk takes writes).
        reconcileQueue.unshift(publicPath);
        await sleepers.pages.sleep(STORAGE_RETRY_MS);
        return;
      }
      log.error(
        { path: publicPath, err: (error as Error).message },
        `[publish] reconcile ${publicPath} failed: ${(error as Error).message}`,
      );
    }
    if (reconcileQueue.length === 0) {
      // Every page is current: index every bundle again (and drop bundles without articles).
      await queueSearch([REINDEX_ALL_JOB]);
      const { counts, total, started, reason } = summary;
      log.info(
        { reason, total, ...counts, ms: Date.now() - started },
        `[publish] reconciled ${total} pages (${reason}) in ${((Date.now() - started) / 1000).toFixed(1)} s: ` +
          `${counts.written} written, ${counts.deleted} deleted, ${counts.unchanged} unchanged`,
      );
      reconcileSummary = undefined;
    }
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
    if (options.writesPending() || reconcileQueue.length > 0) return undefined;
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
    writeRenderManifest(manifestFile, manifest);
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

  async function reconcile(reason: string): Promise<void> {
    const wanted = await listPublicPaths(store);
    const orphans = listRenderedPaths(clientDir, new Set(wanted));
    // Orphans first: pages of other data disappear within moments; then listings, feeds, articles.
    reconcileQueue = [...orphans, ...wanted];
    reconcileSummary = {
      reason,
      started: Date.now(),
      total: reconcileQueue.length,
      counts: { written: 0, unchanged: 0, deleted: 0, absent: 0 },
    };
    log.info({ reason, total: reconcileQueue.length }, `[publish] reconciling ${reconcileQueue.length} pages: ${reason}`);
    wakeUp('pages');
  }

  /** The job `lane` runs next; `queued` counts that lane's jobs, `total` every job of both lanes. */
  async function nextJob(lane: Lane): Promise<{ job: Job | undefined; queued: number; total: number; waitMs: number }> {
    const jobs = [...(await store.jobs.list(1000)), ...localJobs.values()];
    const picked = pickJob(jobs, timing, { now: Date.now(), lastRendered, retryAt, reconciling: reconcileQueue.length > 0 }, lane);
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
        if (reconcileQueue.length > 0) {
          busy = true;
          await runReconcileStep();
          continue;
        }
        // Search jobs held back while pages were ready may run now.
        if (busy) wakeUp('search');
        busy = false;
        if (queued === 0) flushPurge();
        if (total === 0) await onDrained();
        if (reconcileQueue.length > 0) continue;
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
        if (compactedDay !== undefined && searchDay() !== compactedDay) {
          compactedDay = searchDay();
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
    if (manifestMatches(manifest, state, siteUrl)) {
      writtenVersion = state.version;
      // Search jobs a stop left: run now; the manifest loses them once the queues run empty.
      writtenSearchJobs = manifest!.searchJobs ?? [];
      await queueSearch(writtenSearchJobs.filter((jobPath) => searchJobOf(jobPath)));
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
    if (reconcileQueue.length === 0) await queueSearch([COMPACT_JOB]);
    compactedDay = searchDay();
  }

  const running = checkOnStart()
    .catch((error: unknown) => log.error({ err: error }, `[publish] start-up check failed: ${(error as Error).message ?? String(error)}`))
    .then(() => Promise.all([pagesLoop(), searchLoop()]));

  return {
    wake: () => wakeUp(),
    reconcile,
    stats: () => ({ ...stats, reconcilePending: reconcileQueue.length }),
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
