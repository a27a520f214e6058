/**
 * The worker's two loops. The pages lane runs page jobs by urgency, then reconcile steps; the search
 * lane runs re-indexes and compactions, one at a time, while no page job is ready. Each sleeps until
 * its next job is due or it is woken, and backs off while the store is away. Purges go out once no
 * page job is queued; the manifest is written once no job of either lane is, as with one loop, so a
 * written manifest still means the search bundles are done too.
 */
import type { Job } from '../../schemas/misc.ts';
import { errorMessage, logOncePerMinute, type Logger } from '../log.ts';
import { serviceUnavailableOf } from '../errors.ts';
import type { Lane } from './job-picking.ts';
import { STORAGE_RETRY_MS } from './job-claims.ts';

/** The longest a lane sleeps with nothing due: it looks at the queue again (other servers queue jobs too). */
export const IDLE_POLL_MS = 1000;
/** A lane that met a database outage looks again after this long, doubling to the last: back within 2 s of its return. */
const OUTAGE_BACKOFF_MS = [250, 500, 1000, 2000] as const;

export type LaneDeps = {
  /** The job `lane` runs next; `queued` counts that lane's jobs, `total` every job of both lanes. */
  nextJob(lane: Lane): Promise<{ job: Job | undefined; queued: number; total: number; waitMs: number }>;
  runJob(job: Job): Promise<void>;
  /** The running reconcile, checked step by step between page jobs. */
  reconcile: { pending(): number; step(count: number): Promise<'checked' | 'no-space'> };
  /** Paths a reconcile step checks at once. */
  reconcileConcurrency: number;
  /** Sends the paths collected for the CDN purge. */
  flushPurge(): void;
  /** Both queues are empty (the manifest is written then). */
  onDrained(): Promise<void>;
  /** The search lane's look at the clock: a new day (UTC) queues the compaction. */
  queueDailyCompaction(): Promise<void>;
  /** Whether an error is a full (or read-only) disk (reported once a minute where it is met). */
  isDiskFull(error: unknown): boolean;
  log: Logger;
};

export type Lanes = {
  /** Wakes one lane, or both (new jobs of either kind may be queued). */
  wake(lane?: Lane): void;
  /** Runs both loops until `stop`; each finishes the job it is on. */
  run(): Promise<void>;
  stop(): void;
};

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

export function createLanes(deps: LaneDeps): Lanes {
  const { log } = deps;
  let stopped = false;
  const sleepers = { pages: createSleeper(), search: createSleeper() };
  const wake = (lane?: Lane) => {
    for (const name of lane ? [lane] : (['pages', 'search'] as const)) sleepers[name].wake();
  };

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
    if (!deps.isDiskFull(error))
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
        const { job, queued, total, waitMs } = await deps.nextJob('pages');
        outages = 0;
        if (job) {
          busy = true;
          await deps.runJob(job);
          continue;
        }
        if (deps.reconcile.pending() > 0) {
          busy = true;
          // A full disk: the page stays first and the lane waits for space (woken when the disk takes writes).
          if ((await deps.reconcile.step(deps.reconcileConcurrency)) === 'no-space') await sleepers.pages.sleep(STORAGE_RETRY_MS);
          continue;
        }
        // Search jobs held back while pages were ready may run now.
        if (busy) wake('search');
        busy = false;
        if (queued === 0) deps.flushPurge();
        if (total === 0) await deps.onDrained();
        if (deps.reconcile.pending() > 0) continue;
        await sleepers.pages.sleep(Math.max(1, waitMs));
      } catch (error) {
        await pauseAfter('pages', error, serviceUnavailableOf(error) ? outages++ : 0);
      }
    }
  }

  async function searchLoop(): Promise<void> {
    let outages = 0;
    while (!stopped) {
      try {
        await deps.queueDailyCompaction();
        const { job, waitMs } = await deps.nextJob('search');
        outages = 0;
        if (job) {
          await deps.runJob(job);
          // The pages lane writes the manifest once both lanes are drained: let it look now.
          wake('pages');
          continue;
        }
        await sleepers.search.sleep(Math.max(1, waitMs));
      } catch (error) {
        await pauseAfter('search', error, serviceUnavailableOf(error) ? outages++ : 0);
      }
    }
  }

  return {
    wake,
    run: async () => {
      await Promise.all([pagesLoop(), searchLoop()]);
    },
    stop() {
      stopped = true;
      wake();
    },
  };
}
