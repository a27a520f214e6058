/**
 * The publishing pipeline as a background service of the server: the article hook that enqueues
 * regeneration jobs before the API answers, the scheduler, and the worker, which starts once the
 * HTTP server listens. The worker loads each file's data here (pages, feeds, sitemaps) and has the
 * render thread draw it.
 */
import os from 'node:os';
import path from 'node:path';
import { articleWritesPending, type ArticleChange, type Runtime } from '../runtime.ts';
import { serviceUnavailableOf } from '../errors.ts';
import { errorMessage, logOncePerMinute } from '../log.ts';
import { withTimeout } from '../metrics.ts';
import { nowIso, searchDay } from '../clock.ts';
import { articlePath, listPublicPaths } from './paths.ts';
import { computeAffectedPaths, computeLivePaths } from './affected-paths.ts';
import { bundleOf, searchJobPath } from './search-index.ts';
import { startScheduler, type Scheduler } from './scheduler.ts';
import { loadPage } from './page-loads.ts';
import { startRenderPool, type RenderThread } from './render-thread.ts';
import { startRegenerationWorker, type Renderer } from './worker.ts';

export type PublishingSite = {
  /** The served folder (OUT_DIR/client). */
  clientDir: string;
  /** The built bundle (OUT_DIR/server/entry.mjs) the render thread draws pages with. */
  serverEntry: string;
  /** Several servers: the highest stored-page sequence copied before serving (see followStoredPages). */
  syncedThrough?: number;
  /** The render fingerprint of that bundle (OUT_DIR/.build-info.json): pages drawn by another build are drawn again. */
  build?: string;
};

/** Reconcile checks in flight per render thread: one drawn while the next one's data is loaded on the main thread. */
const RECONCILE_CHECKS_PER_THREAD = 2;

/** How long a change whose pages could not be queued waits before the next try, doubling to the last. */
const QUEUE_RETRY_MS = [250, 500, 1000, 2000] as const;

/**
 * Pages queued by article writes: what a publish costs in files, read by the bench through /api/health;
 * `liveUpdates` and `lastLivePages` the same for live coverage writes (issue 35).
 */
export type PublishCounters = {
  batches: number;
  pagesQueued: number;
  lastBatchPages: number;
  maxBatchPages: number;
  liveUpdates?: number;
  lastLivePages?: number;
};

/**
 * Renders a public path, a page or a machine file: its data is loaded on this thread (which holds
 * the store) and drawn by `thread`, which also compares the file it goes to and makes its twins; a
 * file the data no longer has is missing.
 */
export function createSiteRenderer(thread: RenderThread): Renderer {
  return async (publicPath, file) => {
    const load = await loadPage(publicPath);
    if (load.kind === 'missing') return { kind: 'missing' };
    const { body, prepared } = await thread.render(publicPath, load.twin, file);
    return { kind: 'page', body, ...(load.input === undefined ? {} : { input: load.input }), ...(prepared ? { prepared } : {}) };
  };
}

/** Registers the article hook and the scheduler; the worker waits for attachPublishingSite(). */
export function startPublishing(runtime: Runtime): void {
  const log = runtime.log.child({ component: 'publish' });
  const state: NonNullable<Runtime['publishing']> = { counters: { batches: 0, pagesQueued: 0, lastBatchPages: 0, maxBatchPages: 0 } };
  runtime.publishing = state;

  const enqueue = async (paths: string[]) => {
    if (paths.length === 0) return;
    await runtime.store.jobs.enqueue(paths, nowIso());
    state.worker?.wake();
  };
  state.enqueue = enqueue;

  /** Queues the pages (and search bundles) a change affects; throws only when the store is unavailable. */
  const queueChanges = async (changes: ArticleChange[]) => {
    let paths: string[];
    try {
      paths = await computeAffectedPaths(runtime.store, changes);
    } catch (error) {
      if (serviceUnavailableOf(error)) throw error;
      // Never lose a change: fall back to every page the data has, and the old slugs.
      log.error({ err: error }, '[publish] computing affected pages failed; queueing every page');
      const old = changes.flatMap((c) => (c.before ? [articlePath(c.before.slug)] : []));
      paths = [...old, ...(await listPublicPaths(runtime.store))];
    }
    if (paths.length > 0) {
      const { counters } = state;
      counters.batches++;
      counters.pagesQueued += paths.length;
      counters.lastBatchPages = paths.length;
      counters.maxBatchPages = Math.max(counters.maxBatchPages, paths.length);
      log.info(
        { pages: paths.length, articleIds: changes.slice(0, 20).map((c) => (c.after ?? c.before)!.id) },
        `[publish] ${paths.length} pages queued for ${changes.length} article change(s)`,
      );
    }
    // The search bundle each article left or joined (a job of its own, run after the pages): today's
    // head for a publish, the month of an old article that was edited or unpublished.
    const today = searchDay();
    const months = new Set<string>();
    for (const { before, after } of changes) {
      if (before?.status === 'published') months.add(bundleOf(before, today));
      if (after?.status === 'published') months.add(bundleOf(after, today));
    }
    try {
      await enqueue(paths.length ? [...paths, ...[...months].map(searchJobPath)] : []);
    } catch (error) {
      if (serviceUnavailableOf(error)) throw error;
      // The write itself succeeded; answering 500 would mislead the editor. Reconcile instead.
      log.error({ err: error }, '[publish] queueing regeneration failed; reconciling every page');
      void state.worker?.reconcile('a regeneration job could not be stored');
    }
  };

  /**
   * A change stored just before the database went away, whose pages could not be queued: kept here
   * and queued once it answers. It counts as a write in flight meanwhile, so no render manifest
   * names its version (a stop or a crash before it is queued leaves the next start a reconcile).
   */
  const keepUntilQueued = (changes: ArticleChange[], error: unknown) => {
    runtime.hooks.writesInFlight++;
    logOncePerMinute(
      log,
      'queue-later',
      { articleIds: changes.slice(0, 20).map((c) => (c.after ?? c.before)!.id), err: errorMessage(error) },
      `[publish] the store is unavailable: the pages of ${changes.length} stored article change(s) are queued once it answers`,
    );
    void (async () => {
      for (let attempt = 0; ; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, QUEUE_RETRY_MS[Math.min(attempt, QUEUE_RETRY_MS.length - 1)]));
        try {
          await queueChanges(changes);
          log.info({ attempts: attempt + 1 }, `[publish] pages of ${changes.length} article change(s) queued after the store came back`);
          break;
        } catch (retryError) {
          if (!serviceUnavailableOf(retryError)) {
            log.error({ err: retryError }, '[publish] queueing a kept change failed; reconciling every page');
            void state.worker?.reconcile('a regeneration job could not be stored');
            break;
          }
        }
      }
      runtime.hooks.writesInFlight--;
    })();
  };

  // A live update changes its article's page, its live.json and the feeds that list it; no search job (updates are not indexed).
  (runtime.hooks.liveChanged ??= []).push(async (article) => {
    const paths = await computeLivePaths(runtime.store, article);
    if (paths.length === 0) return;
    const { counters } = state;
    counters.liveUpdates = (counters.liveUpdates ?? 0) + 1;
    counters.lastLivePages = paths.length;
    log.info({ pages: paths.length, articleId: article.id }, `[publish] ${paths.length} pages queued for a live coverage change`);
    try {
      await enqueue(paths);
    } catch (error) {
      if (serviceUnavailableOf(error)) throw error;
      log.error({ err: error }, '[publish] queueing regeneration failed; reconciling every page');
      void state.worker?.reconcile('a regeneration job could not be stored');
    }
  });

  // Started after the hook is registered (so an article it publishes at once is not missed), read by the hook.
  const scheduling: { scheduler?: Scheduler } = {};
  runtime.hooks.articlesChanged.push(async (changes) => {
    if (changes.some((c) => c.before?.status === 'scheduled' || c.after?.status === 'scheduled')) scheduling.scheduler?.reschedule();
    try {
      await queueChanges(changes);
    } catch (error) {
      // The article is stored; its pages must follow once the database answers, whatever this request answers.
      if (!serviceUnavailableOf(error)) throw error;
      keepUntilQueued(changes, error);
    }
  });

  // Started after the hook is registered: its first tick may publish articles that came due.
  const scheduler = startScheduler(runtime, { enqueue });
  scheduling.scheduler = scheduler;
  runtime.services.set('publishing-scheduler', scheduler);
  runtime.services.set('publishing-worker', {
    stop: async () => {
      await state.worker?.stop();
    },
  });
}

/**
 * Starts the worker once the server listens: it renders through RENDER_THREADS render threads (a
 * page job uses one; a reconcile, all of them) into `clientDir`.
 */
export function attachPublishingSite(runtime: Runtime, site: PublishingSite): void {
  const state = runtime.publishing;
  if (!state || state.worker) return;
  // On the runtime (not in this module's state): the Astro bundle holds its own copy of this module.
  runtime.servedDir = path.resolve(site.clientDir);
  const settleMs = runtime.config.REGENERATION_SETTLE_MS;
  const threads = runtime.config.RENDER_THREADS ?? os.availableParallelism();
  const pool = startRenderPool(site.serverEntry, threads);
  // Stopped after the worker (registered before it), which finishes the page it is on first.
  runtime.services.set('render-thread', { stop: () => pool.close() });
  state.worker = startRegenerationWorker(runtime, {
    clientDir: site.clientDir,
    render: createSiteRenderer(pool),
    compress: (file, body) => pool.compress(file, body),
    writesPending: () => articleWritesPending(runtime),
    reconcileConcurrency: threads * RECONCILE_CHECKS_PER_THREAD,
    ...(site.syncedThrough === undefined ? {} : { syncedThrough: site.syncedThrough }),
    ...(site.build === undefined ? {} : { build: site.build }),
    ...(settleMs === undefined ? {} : { settleMs, maxWaitMs: Math.max(1000, settleMs * 10) }),
  });
}

/** The pages-per-publish counters of this runtime (zero before publishing starts). */
export function publishCounters(runtime: Runtime): PublishCounters {
  return { ...(runtime.publishing?.counters ?? { batches: 0, pagesQueued: 0, lastBatchPages: 0, maxBatchPages: 0 }) };
}

/** How long /api/health and /api/ready wait for the queue's depth: a database that is down must not hold them. */
const QUEUE_DEPTH_TIMEOUT_MS = 500;

/** The regeneration jobs waiting, or null when the store does not answer in time (liveness must answer regardless). */
export async function queueDepth(runtime: Runtime): Promise<number | null> {
  return withTimeout(runtime.store.jobs.size(), QUEUE_DEPTH_TIMEOUT_MS, 'the job queue').catch(() => null);
}

/**
 * What /api/health reports of publishing: regeneration jobs waiting, pages a reconcile has still to
 * check (the queue is empty meanwhile: a start after the store moved on re-checks every page), and the
 * pages-per-publish counters.
 */
export async function describePublishing(
  runtime: Runtime,
): Promise<{ jobs: number | null; reconciling: number; publishing: PublishCounters }> {
  return {
    jobs: await queueDepth(runtime),
    reconciling: runtime.publishing?.worker?.stats().reconcilePending ?? 0,
    publishing: publishCounters(runtime),
  };
}
