/**
 * The live progress of each source's fetch (the one running, else the last one) for the News Sources
 * tab to poll: kept in memory, and on a store several servers share also in the store, so a poll that
 * reaches another server than the one fetching sees the same run.
 */
import type { FetchProgress } from '../../schemas/source.ts';
import { nowMs } from '../clock.ts';
import type { Runtime } from '../runtime.ts';

export type FetchCount = 'read' | 'created' | 'updated' | 'skipped' | 'refused';

/** A run as the store keeps it, with when it was last written. */
type StoredRun = { run: FetchProgress; at: number };

/** How often a running fetch's counts go to the shared store at most (its start, phases and end always do). */
const SHARE_EVERY_MS = 500;
/**
 * A run still "running" in the store with no word for this long was left by a server that stopped
 * mid-fetch (a download waits 30 s at most, and every phase and a count every half second are written).
 */
const ABANDONED_AFTER_MS = 120_000;

const keyOf = (sourceId: string) => `fetch-progress:${sourceId}`;

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
  const shared = runtime.store.pages.shared;
  let sharedAt = 0;
  // One write at a time, in order, so the last one the store keeps is the newest state.
  let writes = Promise.resolve();
  const share = (always: boolean) => {
    if (!shared || (!always && nowMs() - sharedAt < SHARE_EVERY_MS)) return;
    sharedAt = nowMs();
    const stored: StoredRun = { run: { ...run }, at: sharedAt };
    // Progress is a courtesy: a store that refuses it fails nothing (the fetch's own writes say what matters).
    writes = writes.then(() => runtime.store.meta.set(keyOf(sourceId), stored)).catch(() => {});
  };
  share(true);
  return {
    phase(phase: FetchProgress['phase']) {
      run.phase = phase;
      share(true);
    },
    count(what: FetchCount) {
      run[what] += 1;
      share(false);
    },
    counts(): Pick<FetchProgress, FetchCount> {
      const { read, created, updated, skipped, refused } = run;
      return { read, created, updated, skipped, refused };
    },
    finish(finishedAt: string, message: string) {
      Object.assign(run, { state: 'done', phase: 'done', finishedAt, message });
      share(true);
    },
    fail(finishedAt: string, error: string) {
      Object.assign(run, { state: 'failed', phase: 'done', finishedAt, error });
      share(true);
    },
    /** Resolves once the shared store holds the last state (the fetch answers its caller after it). */
    settled: () => writes,
  };
}
export type ProgressHandle = ReturnType<typeof startProgress>;

/** Every source's current or last run (copies: a poll never sees a half-written record). */
export async function listProgress(runtime: Runtime): Promise<FetchProgress[]> {
  const runs = new Map([...runtime.fetchProgress].map(([id, run]) => [id, { ...run }]));
  if (!runtime.store.pages.shared) return [...runs.values()];
  // Runs this server has not seen: those of the other servers, and those from before it started.
  for (const source of await runtime.store.sources.list()) {
    if (runs.get(source.id)?.state === 'running') continue;
    const stored = await runtime.store.meta.get<StoredRun>(keyOf(source.id));
    if (!stored) continue;
    const mine = runs.get(source.id);
    if (mine && Date.parse(mine.startedAt) >= Date.parse(stored.run.startedAt)) continue;
    runs.set(
      source.id,
      stored.run.state === 'running' && nowMs() - stored.at > ABANDONED_AFTER_MS
        ? { ...stored.run, state: 'failed', phase: 'done', error: 'The server running this fetch stopped before it ended' }
        : stored.run,
    );
  }
  return [...runs.values()];
}
