/**
 * Which regeneration job runs next in each lane, as a pure function of the queue and the clock: each
 * page waits for its burst of saves to settle (search bundles debounce longer), failed jobs wait out
 * their retry, the most urgent ready page goes first. Pages and search run in lanes of their own, so
 * a page never waits behind a search build; the search lane waits while pages are still ready.
 */
import type { Job } from '../../schemas/misc.ts';
import { isHtmlPath } from './paths.ts';
import { searchJobOf } from './search-index.ts';

export type JobTiming = {
  /** A page job waits until its path has been quiet this long, so a burst of saves renders once. */
  settleMs: number;
  /** ...but never longer than this after it was queued or last rendered. */
  maxWaitMs: number;
  /** Today's head search bundle is rebuilt once its job has been quiet this long (other bundles wait 4x). */
  searchDebounceMs: number;
  /** ...but never longer than this after it was queued. */
  searchMaxDelayMs: number;
  /** The longest wait answered when nothing is ready (the idle poll). */
  idlePollMs: number;
};

/** The worker's two loops: `pages` renders pages (never a search job), `search` re-indexes and compacts search bundles. */
export type Lane = 'pages' | 'search';

/** What the worker remembers between picks: when each path was last rendered, when each failed job may run again. */
export type PickState = {
  now: number;
  lastRendered: ReadonlyMap<string, number>;
  retryAt: ReadonlyMap<string, number>;
  /** A full reconcile is under way (search waits for it as for ready pages). */
  reconciling: boolean;
};

/** Urgency of a path: the article itself first, then listing page 1, feeds, deeper listing pages, search last (it reads the pages). */
export function priorityOf(publicPath: string): number {
  const search = searchJobOf(publicPath);
  if (search) return search.kind === 'bundle' ? 4 : 5;
  if (publicPath.startsWith('/article/')) return 0;
  if (/^\/section\/[a-z]+$/.test(publicPath)) return 1;
  if (!isHtmlPath(publicPath)) return 2;
  return 3;
}

/** When a job may run: after it settled (debounced) but no later than its longest wait, and not before its retry. */
export function readyAtOf(job: Job, timing: JobTiming, state: Pick<PickState, 'lastRendered' | 'retryAt'>): number {
  const base = Math.max(Date.parse(job.createdAt), state.lastRendered.get(job.path) ?? 0);
  const searchJob = searchJobOf(job.path);
  const head = searchJob?.kind === 'bundle' && searchJob.bundle.startsWith('head-');
  const settle = searchJob ? (head ? timing.searchDebounceMs : timing.searchDebounceMs * 4) : timing.settleMs;
  const maxWait = searchJob ? timing.searchMaxDelayMs : timing.maxWaitMs;
  return Math.max(state.retryAt.get(job.id) ?? 0, Math.min(Date.parse(job.queuedAt) + settle, base + maxWait));
}

/** The lane a job runs in. */
export function laneOf(jobPath: string): Lane {
  return searchJobOf(jobPath) ? 'search' : 'pages';
}

/**
 * The job `lane` runs now (undefined when none is ready) and how long it sleeps before looking
 * again. Each lane only picks, and only sleeps for, its own jobs; the search lane also holds back
 * while a page job is ready (a page job still listed while the pages lane renders it counts) or a
 * reconcile runs, so a build reads the pages as they are about to be. The pages lane never holds
 * back: a page written while a build runs is queued for indexing again by its own publish.
 */
export function pickJob(jobs: readonly Job[], timing: JobTiming, state: PickState, lane: Lane): { job: Job | undefined; waitMs: number } {
  let best: Job | undefined;
  let waitMs = timing.idlePollMs;
  let pagesReady = false;
  for (const job of jobs) {
    const own = laneOf(job.path) === lane;
    const readyAt = readyAtOf(job, timing, state);
    if (readyAt > state.now) {
      if (own) waitMs = Math.min(waitMs, readyAt - state.now);
      continue;
    }
    // Search reads pages: it waits while a page job is ready (one waiting on a retry does not hold it
    // up; when that page is finally written, its bundle is queued again).
    if (!own) {
      if (lane === 'search') pagesReady = true;
      continue;
    }
    if (!best || priorityOf(job.path) < priorityOf(best.path)) best = job;
  }
  if (lane === 'search' && (pagesReady || state.reconciling)) best = undefined;
  return { job: best, waitMs };
}

/** How long a job that failed `attempts` times before waits: doubling from 1 s, at most 5 minutes. */
export function retryDelayMs(attempts: number): number {
  return Math.min(5 * 60_000, 1000 * 2 ** Math.min(attempts, 12));
}
