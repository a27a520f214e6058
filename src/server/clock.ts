/** The current time as an ISO string; one place so tests and services agree on the format, and tests can move it. */

// This module's own: only tests move the clock, in their own process, where one copy of this module runs.
let movedClock: (() => number) | undefined;

/** Replaces the clock (milliseconds since the epoch) for tests; undefined restores the real one. */
export function setClock(now: (() => number) | undefined): void {
  movedClock = now;
}

/** Milliseconds since the epoch, from the injectable clock. */
export function nowMs(): number {
  return movedClock?.() ?? Date.now();
}

export function nowIso(): string {
  return new Date(nowMs()).toISOString();
}

/**
 * The UTC day (YYYY-MM-DD) the search tiers are cut at (search-index.ts). SEARCH_DAY_OFFSET_DAYS moves
 * it, so a test or bench can play the next day's compaction without waiting for midnight.
 */
export function searchDay(now = Date.now()): string {
  const offset = Number(process.env.SEARCH_DAY_OFFSET_DAYS ?? 0);
  return new Date(now + (Number.isFinite(offset) ? offset : 0) * 86_400_000).toISOString().slice(0, 10);
}
