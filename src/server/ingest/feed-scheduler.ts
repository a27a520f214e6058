/**
 * The feed scheduler: fetches every enabled RSS source once per FEED_FETCH_INTERVAL_MINUTES, each
 * at its own offset so sources do not all fire together, never one source twice at once, and once
 * per slot across every server sharing the store.
 */
import { createHash } from 'node:crypto';
import type { NewsSource } from '../../schemas/source.ts';
import type { Runtime } from '../runtime.ts';
import { serviceUnavailableOf } from '../errors.ts';
import { errorMessage, logOncePerMinute } from '../log.ts';
import { isFetching, runExclusive, settleFetches } from './feed-fetch.ts';

/**
 * Fetches running at once across all sources: a slow feed must not hold up the rest, nor many flood
 * the network. A feed that trickles or hangs holds its slot until the fetch timeout (15 s) cuts it.
 */
export const MAX_CONCURRENT_FETCHES = 4;

export type FeedScheduler = {
  /** Runs one pass now: answers once every source due has started (or waits for a free slot); stop() waits for the fetches. */
  tick(): Promise<void>;
  stop(): Promise<void>;
};

/** A stable offset in [0, spreadMs) per source, so the same source keeps its slot across restarts. */
function offsetOf(sourceId: string, spreadMs: number): number {
  const n = createHash('sha256').update(sourceId).digest().readUInt32BE(0);
  return (n / 0x1_0000_0000) * spreadMs;
}

/**
 * When a source is next due: one interval after its last fetch (or its creation: a new source is
 * fetched by the editor's fetch-now or at its first slot), plus its offset, and not before a Retry-After.
 */
export function nextDueAt(source: NewsSource, intervalMs: number): number {
  const spread = Math.min(intervalMs * 0.2, 5 * 60_000);
  const last = Date.parse(source.lastFetchedAt ?? source.createdAt);
  const due = (Number.isNaN(last) ? 0 : last) + intervalMs + offsetOf(source.id, spread);
  const retry = source.retryAfter ? Date.parse(source.retryAfter) : Number.NaN;
  return Number.isNaN(retry) ? due : Math.max(due, retry);
}

/** Starts the scheduler; it checks for due sources several times per interval (at most every 30 s). */
export function startFeedScheduler(runtime: Runtime): FeedScheduler {
  const log = runtime.log.child({ component: 'ingest' });
  const intervalMs = runtime.config.FEED_FETCH_INTERVAL_MINUTES * 60_000;
  const tickMs = Math.min(30_000, Math.max(250, intervalMs / 4));
  let stopped = false;
  let running: Promise<void> | undefined;
  const active = new Set<Promise<unknown>>();

  async function pass(): Promise<void> {
    const now = Date.now();
    const sources = await runtime.store.sources.list();
    const due = sources
      .filter((s) => s.type === 'rss' && s.enabled && !isFetching(runtime, s.id) && nextDueAt(s, intervalMs) <= now)
      .sort((a, b) => nextDueAt(a, intervalMs) - nextDueAt(b, intervalMs));
    for (const source of due) {
      if (stopped) return;
      while (active.size >= MAX_CONCURRENT_FETCHES) await Promise.race(active);
      if (isFetching(runtime, source.id)) continue;
      // Servers sharing a store (PostgreSQL) all see the source due: the first to claim this slot
      // (its due time, from the lastFetchedAt every server read) fetches it, the others skip it.
      const claim = await runtime.store.limits.hit(`feed-slot:${source.id}:${nextDueAt(source, intervalMs)}`, intervalMs, Date.now());
      if (claim.count > 1) continue;
      // Each fetch logs its own line (runExclusive): a failure here is already told.
      const task = runExclusive(runtime, source).catch(() => {});
      active.add(task);
      void task.finally(() => active.delete(task));
    }
    // Not waiting for the fetches it started: a source that comes due while a slow one is being cut
    // off is started by the next tick, in a free slot.
  }

  function tick(): Promise<void> {
    // One pass at a time: a pass still waiting for a free slot is not doubled by the next tick.
    running ??= pass()
      .catch((error: unknown) => {
        const message = `[ingest] scheduler pass failed: ${errorMessage(error)}`;
        // A store that is down fails every tick until it is back: said once a minute, as a warning.
        if (serviceUnavailableOf(error)) logOncePerMinute(log, 'ingest:store-unavailable', { err: errorMessage(error) }, message);
        else log.error({ err: error }, message);
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  }

  const timer = setInterval(() => {
    if (!stopped) void tick();
  }, tickMs);
  timer.unref();

  return {
    tick,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      await Promise.allSettled([...active]);
      await settleFetches(runtime);
    },
  };
}
