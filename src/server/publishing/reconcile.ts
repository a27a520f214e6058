/**
 * The reconcile: checks every page the served folder should hold (and every file it should not), one
 * step at a time between page jobs, when the pages on disk may not match the store (a start after a
 * crash, an outside rebuild from older data, a job that could not be stored) or were drawn by another
 * build (a start after a deploy, issue 36). A step checks a few paths at once (one or two per render
 * thread), so the page jobs of new writes wait for one step at most.
 */
import type { Logger } from '../log.ts';
import { serviceUnavailableOf } from '../errors.ts';
import type { FileOutcome } from './files.ts';

export type ReconcileDeps = {
  /** Renders one path and brings its file in line. */
  check: (publicPath: string) => Promise<FileOutcome>;
  /** Whether an error is a full (or read-only) disk: the path is checked again once there is space. */
  isDiskFull: (error: unknown) => boolean;
  /** Counts a path that failed (it keeps its old file; the next reconcile or a job retries it). */
  onFailed: () => void;
  /** Runs once every path is checked (the worker then queues the search work it calls for); `failed`: paths that kept their old file. */
  onDone: (result: { failed: number; counts: Record<FileOutcome, number> }) => Promise<void>;
  log: Logger;
};

/** Where a running reconcile is: paths checked of its total, and the time left at its pace so far. */
export type ReconcileProgress = { done: number; total: number; secondsLeft: number | undefined };

/** A point in a reconcile's paths (planPublicPaths' marks): once `end` of them are checked, the log names `label`. */
type Mark = { label: string; end: number };

/** What a reconcile's progress lines need: its reason and start, the marks not reached yet, the last tenth logged. */
export type ProgressLines = { reason: string; started: number; marks: Mark[]; loggedTenth: number };

/**
 * Logs each of `run.marks` that the first `reached` pages cover (once; they are taken off), and the tenth
 * `now` is in when it is a new one and pages are left: the lines a reconcile logs, whoever drew the pages.
 */
export function logReconcileProgress(log: Logger, run: ProgressLines, now: ReconcileProgress, reached: number): void {
  while (run.marks.length && run.marks[0]!.end <= reached) {
    const { label, end } = run.marks.shift()!;
    const ms = Date.now() - run.started;
    log.info(
      { reason: run.reason, mark: label, pages: end, ms },
      `[publish] reconciling: ${label} checked (${end} pages in ${(ms / 1000).toFixed(1)} s)`,
    );
  }
  const tenth = Math.floor((now.done / Math.max(1, now.total)) * 10);
  if (now.done < now.total && tenth > run.loggedTenth) {
    run.loggedTenth = tenth;
    log.info(
      { reason: run.reason, done: now.done, total: now.total, secondsLeft: now.secondsLeft },
      `[publish] reconciling: ${now.done}/${now.total} pages (${tenth * 10}%), about ${now.secondsLeft ?? '?'} s left`,
    );
  }
}

export type Reconcile = {
  /**
   * Starts (or restarts) a reconcile over `paths`, in that order, logging when every path before each of `marks` is
   * checked, and each tenth done; `quiet`: its start and end at debug level and no tenths (a batch of a shared
   * redraw, which logs its own progress).
   */
  start(reason: string, paths: readonly string[], marks?: readonly Mark[], options?: { quiet?: boolean }): void;
  /** Paths still to check, those being checked included (0: none running). */
  pending(): number;
  /** The running reconcile's progress (undefined: none runs). */
  progress(): ReconcileProgress | undefined;
  /**
   * Checks the next `count` paths at once: 'checked', or 'no-space' on a full disk (those paths stay
   * first: wait for space). Rethrows a store outage (its paths stay first too).
   */
  step(count?: number): Promise<'checked' | 'no-space'>;
};

type Outcome = 'checked' | 'no-space' | { outage: unknown };

export function createReconcile(deps: ReconcileDeps): Reconcile {
  const { log } = deps;
  let queue: string[] = [];
  let inFlight = 0;
  let summary:
    | {
        reason: string;
        started: number;
        total: number;
        counts: Record<FileOutcome, number>;
        failed: number;
        loggedTenth: number;
        quiet: boolean;
        /** Marks not reached yet, the nearest first. */
        marks: Mark[];
      }
    | undefined;

  const progress = (): ReconcileProgress | undefined => {
    if (!summary) return undefined;
    const done = summary.total - queue.length - inFlight;
    const spent = (Date.now() - summary.started) / 1000;
    return { done, total: summary.total, secondsLeft: done > 0 ? Math.ceil((spent / done) * (summary.total - done)) : undefined };
  };

  /** Checks one path: a path that met an outage or a full disk is answered so, to go back to the queue. */
  async function checkOne(publicPath: string, run: NonNullable<typeof summary>): Promise<Outcome> {
    try {
      run.counts[await deps.check(publicPath)]++;
      return 'checked';
    } catch (error) {
      // The database went away: the page is checked again once it is back, not skipped.
      if (serviceUnavailableOf(error)) return { outage: error };
      deps.onFailed();
      if (deps.isDiskFull(error)) return 'no-space';
      run.failed++;
      log.error(
        { path: publicPath, err: (error as Error).message },
        `[publish] reconcile ${publicPath} failed: ${(error as Error).message}`,
      );
      return 'checked';
    }
  }

  async function step(count = 1): Promise<'checked' | 'no-space'> {
    const current = summary;
    const paths = queue.splice(0, Math.max(1, count));
    if (paths.length === 0 || !current) return 'checked';
    inFlight += paths.length;
    let outcomes: Outcome[];
    try {
      outcomes = await Promise.all(paths.map((publicPath) => checkOne(publicPath, current)));
    } finally {
      inFlight -= paths.length;
    }
    // Restarted meanwhile: the new reconcile checks every path anyway.
    if (summary !== current) return 'checked';
    const again = paths.filter((_, index) => outcomes[index] !== 'checked');
    queue.unshift(...again);
    const outage = outcomes.find((outcome): outcome is { outage: unknown } => typeof outcome === 'object');
    if (outage) throw outage.outage;
    if (again.length > 0) return 'no-space';
    // Paths are taken in order, so a mark is reached once as many are done (one that met a full disk or an outage was tried again first).
    const now = progress()!;
    if (!current.quiet) logReconcileProgress(log, current, now, now.done);
    if (queue.length === 0) {
      const { counts, total, started, reason, failed } = current;
      summary = undefined;
      await deps.onDone({ failed, counts });
      log[current.quiet ? 'debug' : 'info'](
        { reason, total, ...counts, ms: Date.now() - started },
        `[publish] reconciled ${total} pages (${reason}) in ${((Date.now() - started) / 1000).toFixed(1)} s: ` +
          `${counts.written} written, ${counts.deleted} deleted, ${counts.unchanged} unchanged`,
      );
    }
    return 'checked';
  }

  return {
    start(reason, paths, marks = [], { quiet = false } = {}) {
      queue = [...paths];
      summary = {
        reason,
        started: Date.now(),
        total: queue.length,
        counts: { written: 0, unchanged: 0, deleted: 0, absent: 0 },
        failed: 0,
        loggedTenth: 0,
        quiet,
        marks: [...marks].filter((mark) => mark.end > 0 && mark.end <= paths.length).sort((a, b) => a.end - b.end),
      };
      log[quiet ? 'debug' : 'info']({ reason, total: queue.length }, `[publish] reconciling ${queue.length} pages: ${reason}`);
    },
    pending: () => queue.length + inFlight,
    progress,
    step,
  };
}
