/**
 * The worker's search lane, one job at a time: re-indexes a search bundle in place (today's tier
 * re-planned, an old month edited) or compacts the whole plan for today (the daily fold, a start, the
 * end of a reconcile). Which job runs when is the worker's (job-picking.ts); this is what a job does.
 */
import type { Job } from '../../schemas/misc.ts';
import type { Store } from '../../store/types.ts';
import type { Logger } from '../log.ts';
import { searchDay } from '../clock.ts';
import type { FileOutcome } from './files.ts';
import { listSearchBundles } from './paths.ts';
import { bundleRange, isBundleOfDay, monthOfWeek, isDayTier, planDayTier, searchJobOf } from './search-index.ts';
import { readPeriodsFile, staleDayBundles, staleWeeks } from './search-periods.ts';
import { buildSearchPeriods, syncSearchBundles } from './search-indexer.ts';

/** The figures the lane adds to the worker's stats. */
export type SearchStats = { searchBuilds: number; lastSearchMs: number | undefined };

export type SearchLane = {
  /** Runs one search job (a `/pagefind/...` job path). */
  run(jobPath: string): Promise<{ outcome: FileOutcome; ms: number }>;
  /** The day the last compaction ran for (undefined before the first): a new day asks for one. */
  compactedDay(): string | undefined;
  /** Notes that today's plan is taken care of (a compaction is queued for it). */
  markCompacted(day: string): void;
};

export function createSearchLane(deps: { store: Store; clientDir: string; log: Logger; stats: SearchStats }): SearchLane {
  const { store, clientDir, log, stats } = deps;
  let compactedDay: string | undefined;

  /** One line per search bundle indexed; the job's own time goes to the metrics when it ends. */
  function logSearchBuild(result: { pages: number; ms: number }, bundle: string): void {
    log.info(
      { bundle, pages: result.pages, ms: Math.round(result.ms) },
      `[publish] search index rebuilt: ${result.pages} pages in ${result.ms.toFixed(0)} ms (bundle ${bundle})`,
    );
  }

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

  /**
   * Re-indexes what changed in a closed month listed as its weeks (see staleWeeks): a week by its date
   * range, one with no article any more unlisted. When the month has grown past or shrunk below the size
   * for weeks, the next compaction lays it out again; until then every article stays in one listed bundle.
   */
  async function runWeeks(month: string, listed: readonly string[]): Promise<{ outcome: FileOutcome; ms: number }> {
    const started = performance.now();
    const weeks = new Map<string, string[]>();
    for (const week of [1, 2, 3, 4, 5].map((n) => `${month}-w${n}`)) {
      const slugs = await slugsOf(week);
      if (slugs.length > 0 || listed.includes(week)) weeks.set(week, slugs);
    }
    const stale = new Set(await staleWeeks(clientDir, weeks));
    const results = await buildSearchPeriods(clientDir, new Map([...weeks].filter(([name]) => stale.has(name))));
    for (const result of results) logSearchBuild(result, result.period);
    const ms = performance.now() - started;
    stats.searchBuilds += results.length;
    stats.lastSearchMs = ms;
    return { outcome: results.length === 0 ? 'unchanged' : results.some((r) => !r.removed) ? 'written' : 'deleted', ms };
  }

  async function run(jobPath: string): Promise<{ outcome: FileOutcome; ms: number }> {
    const job = searchJobOf(jobPath);
    if (!job) throw new Error(`${jobPath} is not a search job`);
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
      // A closed month listed as its weeks (publishing names the month): its weeks re-indexed in place.
      const weeks = listed.filter((name) => monthOfWeek(name) === job.bundle);
      if (weeks.length > 0 && isBundleOfDay(job.bundle, today)) return runWeeks(job.bundle, weeks);
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

  return {
    run,
    compactedDay: () => compactedDay,
    markCompacted: (day) => {
      compactedDay = day;
    },
  };
}

/** Search jobs of this server alone (several servers: each indexes its own folder), coalesced by path as the stored queue does. */
export type LocalSearchQueue = {
  add(paths: readonly string[]): void;
  /** Completes a job (`local-` id) unless it was queued again since `startedAt`. */
  complete(job: Job, startedAt: string): void;
  jobs(): Job[];
  paths(): string[];
};

export function createLocalSearchQueue(onQueued: () => void): LocalSearchQueue {
  const byPath = new Map<string, Job>();
  let seq = 0;
  return {
    add(paths) {
      const now = new Date().toISOString();
      for (const jobPath of paths) {
        const existing = byPath.get(jobPath);
        if (existing) existing.queuedAt = now;
        else byPath.set(jobPath, { id: `local-${++seq}`, path: jobPath, createdAt: now, queuedAt: now, attempts: 0 });
      }
      if (paths.length) onQueued();
    },
    complete(job, startedAt) {
      const current = byPath.get(job.path);
      if (current?.id === job.id && current.queuedAt <= startedAt) byPath.delete(job.path);
      else if (current) current.attempts = 0;
    },
    jobs: () => [...byPath.values()],
    paths: () => [...byPath.keys()],
  };
}
