/** The live progress of each source's fetch (the one running, else the last one), kept in memory for the News Sources tab to poll. */
import type { FetchProgress } from '../../schemas/source.ts';
import type { Runtime } from '../runtime.ts';

export type FetchCount = 'read' | 'created' | 'updated' | 'skipped' | 'refused';

/** Starts a source's run record (replacing its last one) and answers the handle the fetch updates. */
export function startProgress(runtime: Runtime, sourceId: string, startedAt: string) {
  const run: FetchProgress = {
    sourceId,
    state: 'running',
    phase: 'downloading',
    startedAt,
    read: 0,
    created: 0,
    updated: 0,
    skipped: 0,
    refused: 0,
  };
  runtime.fetchProgress.set(sourceId, run);
  return {
    phase(phase: FetchProgress['phase']) {
      run.phase = phase;
    },
    count(what: FetchCount) {
      run[what] += 1;
    },
    counts(): Pick<FetchProgress, FetchCount> {
      const { read, created, updated, skipped, refused } = run;
      return { read, created, updated, skipped, refused };
    },
    finish(finishedAt: string, message: string) {
      Object.assign(run, { state: 'done', phase: 'done', finishedAt, message });
    },
    fail(finishedAt: string, error: string) {
      Object.assign(run, { state: 'failed', phase: 'done', finishedAt, error });
    },
  };
}
export type ProgressHandle = ReturnType<typeof startProgress>;

/** Every source's current or last run since this server started, copies (a poll never sees a half-written record). */
export function listProgress(runtime: Runtime): FetchProgress[] {
  return [...runtime.fetchProgress.values()].map((run) => ({ ...run }));
}
