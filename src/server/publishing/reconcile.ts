/**
 * The reconcile: checks every page the served folder should hold (and every file it should not), one
 * step at a time between page jobs, when the pages on disk may not match the store (a start after a
 * crash, an outside rebuild from older data, a job that could not be stored).
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
  /** Runs once every path is checked (the worker re-indexes every search bundle). */
  onDone: () => Promise<void>;
  log: Logger;
};

export type Reconcile = {
  /** Starts (or restarts) a reconcile over `paths`, in that order. */
  start(reason: string, paths: readonly string[]): void;
  /** Paths still to check (0: none running). */
  pending(): number;
  /** Checks the next path: 'checked', or 'no-space' on a full disk (the path stays first: wait for space). Rethrows a store outage. */
  step(): Promise<'checked' | 'no-space'>;
};

export function createReconcile(deps: ReconcileDeps): Reconcile {
  const { log } = deps;
  let queue: string[] = [];
  let summary: { reason: string; started: number; total: number; counts: Record<FileOutcome, number> } | undefined;

  async function step(): Promise<'checked' | 'no-space'> {
    const publicPath = queue.shift();
    if (publicPath === undefined || !summary) return 'checked';
    try {
      summary.counts[await deps.check(publicPath)]++;
    } catch (error) {
      if (serviceUnavailableOf(error)) {
        // The database went away: the page is checked again once it is back, not skipped.
        queue.unshift(publicPath);
        throw error;
      }
      deps.onFailed();
      if (deps.isDiskFull(error)) {
        queue.unshift(publicPath);
        return 'no-space';
      }
      log.error(
        { path: publicPath, err: (error as Error).message },
        `[publish] reconcile ${publicPath} failed: ${(error as Error).message}`,
      );
    }
    if (queue.length === 0) {
      const { counts, total, started, reason } = summary;
      summary = undefined;
      await deps.onDone();
      log.info(
        { reason, total, ...counts, ms: Date.now() - started },
        `[publish] reconciled ${total} pages (${reason}) in ${((Date.now() - started) / 1000).toFixed(1)} s: ` +
          `${counts.written} written, ${counts.deleted} deleted, ${counts.unchanged} unchanged`,
      );
    }
    return 'checked';
  }

  return {
    start(reason, paths) {
      queue = [...paths];
      summary = { reason, started: Date.now(), total: queue.length, counts: { written: 0, unchanged: 0, deleted: 0, absent: 0 } };
      log.info({ reason, total: queue.length }, `[publish] reconciling ${queue.length} pages: ${reason}`);
    },
    pending: () => queue.length,
    step,
  };
}
