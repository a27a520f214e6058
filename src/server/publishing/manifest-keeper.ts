/**
 * Keeps the render manifest true to the served pages: checks it at start and reconciles when the
 * pages do not match the store (or were drawn by another build), writes it once both queues are
 * drained, and reconciles when another process (a rebuild) swapped in pages from an older snapshot.
 */
import type { Store } from '../../store/types.ts';
import type { Metrics } from '../metrics.ts';
import type { Logger } from '../log.ts';
import type { FileOutcome } from './files.ts';
import { manifestFileFor, manifestMatches, readRenderManifest, saveRenderManifest, type RenderManifest } from './manifest.ts';
import type { ReconcileKind } from './page-lane.ts';
import type { Regenerator } from './regenerator.ts';
import type { OrderMark } from './paths.ts';
import { createReconcile, logReconcileProgress, type ReconcileProgress } from './reconcile.ts';
import {
  migrateRenderState,
  pagesDrawnWith,
  readRenderStateHeader,
  RENDER_STATE_FILE,
  updateRenderStateHeaderAsync,
} from './render-state.ts';
import { REINDEX_ALL_JOB, searchJobOf } from './search-index.ts';
import { searchIndexerVersion } from './search-indexer.ts';
import { joinSharedSweep, type SharedSweep, type SharedSweepDeps, type SweepBatch } from './shared-sweep.ts';

/** How often an idle worker checks whether another process (the rebuild) replaced the manifest. */
const MANIFEST_CHECK_MS = 15_000;
/** How soon a server whose sweep batches are all held by others looks again (between page jobs). */
const SWEEP_WAIT_MS = 250;

export type ManifestKeeperDeps = {
  store: Store;
  clientDir: string;
  siteUrl: string;
  /** The render fingerprint of the bundle pages are drawn with (undefined: pages are never re-checked for the code). */
  build: string | undefined;
  /** Whether an article write is still between its store write and the end of its hooks' enqueuing. */
  writesPending: () => boolean;
  regenerator: Regenerator;
  /** Renders one page as part of a reconcile of that kind (the worker's page lane). */
  regenerate: (publicPath: string, kind: ReconcileKind) => Promise<{ outcome: FileOutcome }>;
  /** Queues search jobs (bundle names or job paths). */
  queueSearch: (bundles: string[]) => Promise<void>;
  /** This server's own search jobs by path (several servers; the manifest names those a stop leaves). */
  localSearchJobs: () => string[];
  /** Wakes the pages lane (a reconcile was started). */
  wakePages: () => void;
  /** Whether an error is a full (or read-only) disk. */
  isDiskFull: (error: unknown) => boolean;
  /** Several servers on one database: a redraw for a new build is shared with them (shared-sweep.ts). */
  sweep?: Omit<SharedSweepDeps, 'store' | 'log'>;
  stats: { reconciled: number; failed: number };
  metrics: Metrics;
  log: Logger;
};

export type ManifestKeeper = {
  /** A folder from before render-state.json: its manifest and page records move in. */
  migrate(): void;
  /** Compares the manifest with the store and the build, and starts a reconcile when they differ. */
  checkOnStart(): Promise<void>;
  /** Renders every page again, writing those that changed and removing those that no longer exist. */
  reconcile(reason: string, kind?: ReconcileKind): Promise<void>;
  /** Checks the reconcile's next `count` paths at once ('no-space': a full disk, those paths stay first). */
  step(count: number): Promise<'checked' | 'no-space'>;
  /** Paths the running reconcile has still to check (0: none runs). */
  pending(): number;
  progress(): ReconcileProgress | undefined;
  /** A page was rendered: the manifest is written again once the queues are drained. */
  pageRendered(): void;
  /**
   * With nothing queued, pending or reconciling, writes the manifest for the store's version if it is
   * not written yet. Answers 'written', the store's state when the manifest already named it, or
   * undefined when work is left. `queued: 'kept'` (a stop) accepts jobs still queued: those in the
   * stored queue stay there, and this server's own search jobs are named in the manifest; it then
   * means the pages match that version apart from those jobs, which the next start runs.
   */
  recordDrainedState(queued?: 'none' | 'kept'): Promise<{ id: string; version: number } | 'written' | undefined>;
  /** Both queues are empty: the manifest is written, or checked now and then for an outside rebuild. */
  onDrained(): Promise<void>;
  /** A stop: a shared batch being drawn is left to the other servers once its lease runs out. */
  stop(): Promise<void>;
};

export function createManifestKeeper(deps: ManifestKeeperDeps): ManifestKeeper {
  const { store, siteUrl, log, stats } = deps;
  const manifestFile = manifestFileFor(deps.clientDir);
  /** Something was rendered since the manifest was last written. */
  let manifestStale = false;
  /** The manifest as this worker last wrote or accepted it; a different one on disk came from elsewhere. */
  let knownManifest: string | undefined;
  let lastManifestCheck = Date.now();
  /** The article version the manifest on disk names, once this worker knows the pages match it. */
  let writtenVersion: number | undefined;
  /** The search jobs the manifest on disk names as left to run (a stop's, see recordDrainedState). */
  let writtenSearchJobs: string[] = [];
  /** What the served pages were drawn with, as the render state says (undefined: not known). */
  let drawnWith: string | undefined;
  /** What the running reconcile checks for; an article page it removed leaves a bundle to index again. */
  let reconcileKind: ReconcileKind = 'data';
  let reconcileRemovedArticle = false;
  /** The shared redraw this server takes part in, and the batch of it the reconcile is drawing. */
  let sweeping:
    | {
        sweep: SharedSweep;
        reason: string;
        started: number;
        /** This server's pages, over its batches. */
        counts: Record<FileOutcome, number>;
        failed: number;
        /** Where the front pages and recent articles end in the sweep's order, not yet logged. */
        marks: OrderMark[];
        loggedTenth: number;
        batch?: SweepBatch;
      }
    | undefined;

  const reconciler = createReconcile({
    check: async (publicPath) => {
      const { outcome } = await deps.regenerate(publicPath, reconcileKind);
      stats.reconciled++;
      if (outcome === 'deleted' && /^\/article\/[^/]+$/.test(publicPath)) reconcileRemovedArticle = true;
      return outcome;
    },
    isDiskFull: deps.isDiskFull,
    onFailed: () => {
      stats.failed++;
      deps.metrics.pagesRendered.inc({ outcome: 'failed' });
    },
    // A shared redraw's batch (or this folder's own stale files) is done: the sweep goes on. Otherwise every page is current.
    onDone: async ({ failed, counts }) => {
      if (!sweeping) return redrawn(failed);
      sweeping.failed += failed;
      for (const [outcome, count] of Object.entries(counts)) sweeping.counts[outcome as FileOutcome] += count;
    },
    log,
  });

  /**
   * Every page is current. After a new build only the bundles of pages whose text changed were queued (a new
   * footer indexes nothing); otherwise, or with another Pagefind, every bundle is indexed again (and those without articles dropped).
   */
  async function redrawn(failed: number): Promise<void> {
    const indexer = readRenderStateHeader(manifestFile).rebuild?.indexer;
    if (reconcileKind === 'data' || reconcileRemovedArticle || indexer !== searchIndexerVersion())
      await deps.queueSearch([REINDEX_ALL_JOB]);
    else log.info('[publish] search index kept: only the bundles of pages whose text changed are indexed again');
    // Every page was drawn by this build (a page that failed keeps the old one's: the next start tries again).
    if (deps.build !== undefined && failed === 0 && drawnWith !== deps.build) {
      const build = deps.build;
      await updateRenderStateHeaderAsync(manifestFile, (header) => ({ ...header, drawnWith: build }));
      drawnWith = build;
      log.info({ build }, `[publish] every page is drawn by this build (${build})`);
    }
  }

  /** Pages the running reconcile or shared redraw has still to check (0: none runs). */
  function pending(): number {
    if (!sweeping) return reconciler.pending();
    return reconciler.pending() + Math.max(1, sweeping.sweep.pagesLeft() - (sweeping.batch?.paths.length ?? 0));
  }

  function progress(): ReconcileProgress | undefined {
    if (!sweeping) return reconciler.progress();
    const total = sweeping.sweep.pages;
    const done = Math.max(0, total - pending());
    const spent = (Date.now() - sweeping.started) / 1000;
    return { done, total, secondsLeft: done > 0 ? Math.ceil((spent / done) * (total - done)) : undefined };
  }

  /**
   * The next step of a shared redraw, once the reconcile drew its batch: completes that batch, then
   * claims the next free one (or waits for the other servers', or copies what they stored and ends).
   * It logs as a reconcile does, over every server's pages.
   */
  async function stepSweep(run: NonNullable<typeof sweeping>): Promise<'checked'> {
    if (run.batch) {
      await run.sweep.done();
      run.batch = undefined;
      // The marks count only the first batches in a row that are drawn: readers see those pages new.
      logReconcileProgress(log, run, progress()!, run.sweep.leadingDone());
    }
    const next = await run.sweep.next();
    if (next === 'wait') await new Promise((resolve) => setTimeout(resolve, SWEEP_WAIT_MS));
    else if (next === 'finished') {
      const copied = await run.sweep.finish();
      sweeping = undefined;
      const { counts, reason, sweep } = run;
      const ms = Date.now() - run.started;
      log.info(
        { reason, total: sweep.pages, ...counts, drawnHere: sweep.drawnHere(), copiedAtEnd: copied.written, ms },
        `[publish] reconciled ${sweep.pages} pages (${reason}) in ${(ms / 1000).toFixed(1)} s: ` +
          `${counts.written} written, ${counts.deleted} deleted, ${counts.unchanged} unchanged; ` +
          `${sweep.drawnHere()} of ${sweep.pages} drawn here, the rest by the other servers`,
      );
      await redrawn(run.failed);
    } else {
      run.batch = next;
      reconciler.start(`${run.reason}, batch ${next.index + 1} of ${next.of}`, next.paths, [], { quiet: true });
    }
    return 'checked';
  }

  async function currentState(): Promise<{ id: string; version: number }> {
    return { id: store.id, version: await store.articles.version() };
  }

  async function reconcile(reason: string, kind: ReconcileKind = 'data'): Promise<void> {
    // One joining a running reconcile: a reconcile of the data among them indexes everything when it ends.
    if (pending() === 0) {
      reconcileKind = kind;
      reconcileRemovedArticle = false;
    } else if (kind === 'data') reconcileKind = 'data';
    const plan = await deps.regenerator.planAll(store);
    // A new build on several servers: they share the drawing, and each checks the files only its folder holds.
    if (kind === 'build' && deps.sweep && deps.build !== undefined && pending() === 0) {
      const stale = plan.paths.slice(0, plan.stale);
      const sweep = await joinSharedSweep(
        { ...deps.sweep, store, log },
        { build: deps.build, from: drawnWith ?? '' },
        plan.paths.slice(plan.stale),
      );
      if (sweep) {
        sweeping = {
          sweep,
          reason,
          started: Date.now(),
          counts: { written: 0, unchanged: 0, deleted: 0, absent: 0 },
          failed: 0,
          marks: plan.marks.map((mark) => ({ ...mark, end: mark.end - plan.stale })).filter((mark) => mark.end > 0),
          loggedTenth: 0,
        };
        log.info(
          { reason, total: sweep.pages },
          `[publish] reconciling ${sweep.pages} pages: ${reason} (shared with the servers on this database, in batches)`,
        );
      } else log.info(`[publish] the servers sharing the database drew every page for this build: copied at start`);
      if (stale.length) reconciler.start(`${reason}: files the data no longer has`, stale);
      else if (!sweep) await redrawn(0);
      deps.wakePages();
      return;
    }
    reconciler.start(reason, plan.paths, plan.marks);
    deps.wakePages();
  }

  async function recordDrainedState(queued: 'none' | 'kept' = 'none'): Promise<{ id: string; version: number } | 'written' | undefined> {
    if (deps.writesPending() || pending() > 0) return undefined;
    if (deps.localSearchJobs().length > 0 && queued === 'none') return undefined;
    const state = await currentState();
    // Re-check after the await: a write may have queued jobs meanwhile.
    if (deps.writesPending()) return undefined;
    const left = await store.jobs.size();
    if (left > 0 && queued === 'none') return undefined;
    const searchJobs = deps.localSearchJobs().sort();
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

  return {
    migrate() {
      if (migrateRenderState(deps.clientDir))
        log.info(`[publish] moved the render manifest, page records and search day tier into ${RENDER_STATE_FILE}`);
    },
    async checkOnStart() {
      const state = await currentState();
      const manifest = readRenderManifest(manifestFile);
      knownManifest = JSON.stringify(manifest);
      drawnWith = pagesDrawnWith(readRenderStateHeader(manifestFile));
      if (manifestMatches(manifest, state, siteUrl)) {
        writtenVersion = state.version;
        // Search jobs a stop left: run now; the manifest loses them once the queues run empty.
        writtenSearchJobs = manifest!.searchJobs ?? [];
        await deps.queueSearch(writtenSearchJobs.filter((jobPath) => searchJobOf(jobPath)));
        // A deploy: the pages match the store but were drawn by the old build. They stay served meanwhile.
        if (deps.build !== undefined && drawnWith !== undefined && drawnWith !== deps.build)
          await reconcile(`the pages were drawn by another build (${drawnWith}, this one is ${deps.build})`, 'build');
        return;
      }
      const why = !manifest
        ? 'no render manifest beside the served pages'
        : manifest.storeId !== state.id
          ? 'the pages were rendered from another data folder'
          : manifest.version !== state.version
            ? `the pages were rendered from article version ${manifest.version}, the store is at ${state.version}`
            : `the pages were rendered for SITE_URL ${manifest.siteUrl}, not ${siteUrl}`;
      await reconcile(why);
    },
    reconcile,
    step: (count) => (sweeping && reconciler.pending() === 0 ? stepSweep(sweeping) : reconciler.step(count)),
    pending,
    progress,
    pageRendered() {
      manifestStale = true;
    },
    recordDrainedState,
    async onDrained() {
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
    },
    async stop() {
      await sweeping?.sweep.release();
    },
  };
}
