/**
 * One queued job run under its claim: with several servers on one database a job is claimed with a
 * lease before it runs and the lease renewed while it runs; a finished job is completed, a failed one
 * recorded with the time it is tried again (one that met a full disk waits for space). Which job
 * runs when is the worker's; what a job does is its lane's.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Job } from '../../schemas/misc.ts';
import type { Store } from '../../store/types.ts';
import type { Metrics } from '../metrics.ts';
import { errorMessage, logOncePerMinute, type Logger } from '../log.ts';
import { serviceUnavailableOf } from '../errors.ts';
import type { FileOutcome } from './files.ts';
import { retryDelayMs } from './job-picking.ts';
import { searchJobOf } from './search-index.ts';
import { describeJobError, type ActivityLog } from './activity.ts';

/** How soon a job that met a full disk is tried again at the latest (and at once when the disk takes writes again). */
export const STORAGE_RETRY_MS = 5000;
/** How soon a job another server holds is looked at again. */
const CLAIMED_RETRY_MS = 200;

/**
 * This server's name in job claims and stored pages: the id kept in `DATA_DIR/server-id`, written once
 * (atomically) on first start. It is stable for its DATA_DIR, which one live process holds at a time
 * (the lock), so a server restarted after a crash takes its own claimed jobs back at once instead of
 * waiting out their lease. Another server still waits for the lease.
 */
export function serverIdentity(dataDir: string): string {
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
 * Renews the claim on `job` every quarter of the lease (1 s of the default 4 s), so three renewals
 * may go astray before it runs out: work that outlasts part of the lease (a search compaction, a batch
 * of a shared redraw) is not taken over and done twice, and a killed server stops renewing. Answers how
 * to stop it, which waits for a renewal in flight (one landing after the claim is given up would claim
 * the job again).
 */
export function holdJobClaim(
  store: Store,
  job: Pick<Job, 'id' | 'path'>,
  holder: string,
  leaseMs: number,
  log: Logger,
): () => Promise<void> {
  let beat: Promise<unknown> = Promise.resolve();
  const heartbeat = setInterval(
    () => {
      beat = store.jobs
        .claim(job.id, holder, Date.now() + leaseMs, Date.now())
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
  );
  return async () => {
    clearInterval(heartbeat);
    await beat;
  };
}

export type JobRunnerDeps = {
  store: Store;
  /** Several servers on one database: this server's name in claims (undefined: one server, nothing is claimed). */
  sharedOwner: string | undefined;
  /** How long a claim holds without renewal (JOB_LEASE_MS). */
  leaseMs: number;
  log: Logger;
  metrics: Metrics;
  /** The figures the runner adds to the worker's stats. */
  stats: { jobs: number; failed: number };
  activity: ActivityLog;
  /** The served folder (failure messages shown on the dashboard leave its path out). */
  clientDir: string;
  /** Runs one job path in its lane; answers what happened to the file (or the search bundles). */
  regenerate: (publicPath: string) => Promise<{ outcome: FileOutcome; ms: number }>;
  /** Completes a job of this server's own search queue (`local-` ids), unless it was queued again meanwhile. */
  completeLocal: (job: Job, startedAt: string) => void;
  /** Whether an error is a full (or read-only) disk, reported if it is. */
  isDiskFull: (error: unknown) => boolean;
  /** Rethrows an error unless it is a full disk (job bookkeeping the data folder could not store waits in memory). */
  tolerateDiskFull: (error: unknown) => void;
};

export type JobRunner = {
  /** Claims (several servers), runs and completes one job; a failure is recorded, a store outage rethrown. */
  run(job: Job): Promise<void>;
  /** When each failed job (or one another server holds) is looked at again, epoch ms by job id. */
  retryAt: Map<string, number>;
  /** Tries the named jobs at the next look: their backoff on this server is cleared. */
  clearBackoff(ids: Iterable<string>): void;
  /** The disk takes writes again: the jobs that waited for space are tried at the next look. */
  spaceFreed(): void;
};

export function createJobRunner(deps: JobRunnerDeps): JobRunner {
  const { store, sharedOwner: owner, leaseMs, log, metrics, stats, activity, tolerateDiskFull } = deps;
  const retryAt = new Map<string, number>();
  /** Jobs that failed on a full disk: tried again as soon as the disk takes writes. */
  const waitingForSpace = new Set<string>();
  async function run(job: Job): Promise<void> {
    // One millisecond early, so a save landing in the same millisecond as the start re-queues the job.
    const startedAt = new Date(Date.now() - 1).toISOString();
    const local = job.id.startsWith('local-');
    const claimed = owner !== undefined && !local;
    if (claimed && !(await store.jobs.claim(job.id, owner, Date.now() + leaseMs, Date.now()))) {
      // Another server is on it: look again shortly (it is gone once done; a killed server's lease runs out).
      retryAt.set(job.id, Date.now() + CLAIMED_RETRY_MS);
      return;
    }
    const releaseClaim = claimed ? holdJobClaim(store, job, owner, leaseMs, log) : async () => {};
    const isSearch = searchJobOf(job.path) !== undefined;
    // A search build takes seconds: its start is worth a (debug) line, its end is logged anyway.
    if (isSearch) log.debug({ jobId: job.id, path: job.path }, `[publish] ${job.path} started`);
    try {
      const { outcome, ms } = await deps.regenerate(job.path).finally(releaseClaim);
      if (isSearch) metrics.searchIndexSeconds.observe(ms / 1000);
      if (isSearch) activity.noteSearch(ms);
      else activity.notePage(job.path, outcome, ms);
      if (local) deps.completeLocal(job, startedAt);
      else await store.jobs.complete(job.id, startedAt).catch(tolerateDiskFull);
      // Search work done here in the stored queue: the other servers re-index their own folders too.
      if (claimed && isSearch) await store.pages.put(job.path, undefined, owner);
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
      const message = describeJobError(error, deps.clientDir);
      if (local) {
        job.attempts++;
        job.lastError = message;
      } else await store.jobs.fail(job.id, message).catch(tolerateDiskFull);
      if (deps.isDiskFull(error)) {
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
      await releaseClaim();
    }
  }

  return {
    run,
    retryAt,
    clearBackoff(ids) {
      for (const id of ids) {
        retryAt.delete(id);
        waitingForSpace.delete(id);
      }
    },
    spaceFreed() {
      for (const id of waitingForSpace) retryAt.delete(id);
      waitingForSpace.clear();
    },
  };
}
