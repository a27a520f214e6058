/** The paths a CDN purge will name: collected as files change, deduplicated, and handed over in batches of a bounded size. */

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
