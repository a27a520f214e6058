/** The paths a CDN purge will name: collected as files change, deduplicated, and handed over in batches of a bounded size. */
import type { Purger } from './purge.ts';

export type PurgeBatch = {
  /** Adds a changed path; answers a full batch to send now, or undefined while the batch has room. */
  add(publicPath: string): string[] | undefined;
  /** Answers what is collected (deduplicated, in order of first change) and starts a new batch. */
  take(): string[];
};

export function createPurgeBatch(limit = 500): PurgeBatch {
  let paths = new Set<string>();
  let added = 0;
  const take = () => {
    const batch = [...paths];
    paths = new Set();
    added = 0;
    return batch;
  };
  return {
    add(publicPath) {
      paths.add(publicPath);
      added++;
      // Counted per change, not per distinct path, as before: a busy page still sends its purge in time.
      return added >= limit ? take() : undefined;
    },
    take,
  };
}

/** The worker's side of the purge: paths collected as files change, sent as a batch fills or the queue empties. */
export type PurgeOutbox = { add(publicPath: string): void; flush(): void };

/** Never awaited by a job: a hanging PURGE_URL costs the worker nothing (the purger bounds and retries it). */
export function createPurgeOutbox(purger: Purger | undefined): PurgeOutbox {
  const batch = createPurgeBatch();
  return {
    add(publicPath) {
      const full = batch.add(publicPath);
      if (full) purger?.send(full);
    },
    flush: () => purger?.send(batch.take()),
  };
}
