/**
 * The dashboard's Publishing panel (issue 33): what the regeneration queue and this server's worker
 * are doing, read from the queue (the stored one every server shares, and this server's own search
 * jobs) and the worker's activity log; and Retry, which has a failed job tried now.
 */
import type { Job } from '../../schemas/misc.ts';
import type { PublishingRetry, PublishingRetryResult, PublishingStatus } from '../../schemas/publishing.ts';
import { AppError, conflict, notFound } from '../errors.ts';
import type { Runtime } from '../runtime.ts';
import { laneOf } from './job-picking.ts';
import type { ReconcileProgress } from './reconcile.ts';

/** How many failed jobs the panel lists (and "Retry all" retries): a broken template fails every page, the list need not. */
export const FAILED_SHOWN = 50;
/** The stored queue's head read to count search jobs, as the worker reads it to pick one. */
const QUEUE_HEAD = 1000;

export async function readPublishingStatus(runtime: Runtime): Promise<PublishingStatus> {
  const { store } = runtime;
  const worker = runtime.publishing?.worker;
  const activity = worker?.activity();
  const [size, head, storedFailed] = await Promise.all([store.jobs.size(), store.jobs.list(QUEUE_HEAD), store.jobs.failed(FAILED_SHOWN)]);
  const local = activity?.localJobs ?? [];
  const failedJobs = [...storedFailed, ...local.filter((job) => job.attempts > 0)].slice(0, FAILED_SHOWN);
  const now = Date.now();
  const failed = failedJobs.map((job) => {
    const retryAt = activity?.retryAt.get(job.id);
    return {
      id: job.id,
      path: job.path,
      attempts: job.attempts,
      error: job.lastError ?? 'Unknown error',
      ...(retryAt !== undefined && retryAt > now ? { nextTryAt: new Date(retryAt).toISOString() } : {}),
    };
  });
  const renderingNow = activity?.renderingNow ?? [];
  const building = activity?.searchBuilding;
  const runningPaths = new Set([...renderingNow.map((r) => r.path), ...(building ? [building.path] : [])]);
  const queued = [...head, ...local];
  // A job running here is counted as running, a failed one as failed (a retry running counts once, as running).
  const runningQueued = queued.filter((job) => runningPaths.has(job.path) && job.attempts === 0).length;
  const searchQueued = queued.filter((job) => laneOf(job.path) === 'search' && job.path !== building?.path).length;
  const lastSearch = activity?.lastSearch;
  return {
    waiting: Math.max(0, size + local.length - failed.length - runningQueued),
    renderingNow,
    recent: activity?.recent ?? [],
    failed,
    search: {
      state: building ? 'building' : searchQueued > 0 ? 'waiting' : 'idle',
      pending: searchQueued,
      ...(lastSearch ? { lastBuiltAt: lastSearch.at, lastMs: lastSearch.ms } : {}),
    },
    reconciling: worker?.stats().reconcilePending ?? 0,
    ...reconcileOf(worker?.stats().reconcile),
  };
}

/** A running reconcile as the panel shows it: its size and time left. */
function reconcileOf(progress: ReconcileProgress | undefined): Pick<PublishingStatus, 'reconcile'> {
  if (!progress) return {};
  return { reconcile: { total: progress.total, ...(progress.secondsLeft === undefined ? {} : { secondsLeft: progress.secondsLeft }) } };
}

/** The failed jobs a "Retry all" takes: the stored queue's and this server's own. */
async function listFailed(runtime: Runtime): Promise<Job[]> {
  const local = runtime.publishing?.worker?.activity().localJobs ?? [];
  return [...(await runtime.store.jobs.failed(FAILED_SHOWN)), ...local.filter((job) => job.attempts > 0)];
}

/**
 * Has a failed job (or every failed job) tried now: its backoff on this server is cleared and the
 * worker wakes. 404 for a job the queue does not hold (done meanwhile, or never queued), 409 for one
 * that is queued but not failing (it renders in its turn).
 */
export async function retryFailedJobs(runtime: Runtime, input: PublishingRetry): Promise<PublishingRetryResult> {
  const worker = runtime.publishing?.worker;
  if (!worker) throw new AppError(503, 'No regeneration worker runs in this process');
  const log = runtime.log.child({ component: 'publish' });
  if ('all' in input) {
    const jobs = await listFailed(runtime);
    worker.retry(jobs.map((job) => job.id));
    if (jobs.length) log.info({ jobs: jobs.length }, `[publish] retrying ${jobs.length} failed job(s) now, as asked from the dashboard`);
    return { retried: jobs.length, message: jobs.length ? `Retrying ${jobs.length} failed render(s)` : 'Nothing has failed' };
  }
  const job = input.id.startsWith('local-')
    ? worker.activity().localJobs.find((local) => local.id === input.id)
    : await runtime.store.jobs.get(input.id);
  if (!job) throw notFound('Publishing job');
  if (job.attempts === 0) throw conflict(`${job.path} is not failing: it is queued and renders in its turn`);
  worker.retry([job.id]);
  log.info({ jobId: job.id, path: job.path }, `[publish] retrying ${job.path} now, as asked from the dashboard`);
  return { retried: 1, message: `Retrying ${job.path}` };
}
