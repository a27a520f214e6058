/** The current time as an ISO string; one place so tests and services agree on the format. */
export function nowIso(): string {
  return new Date().toISOString();
}

/**
 * The UTC day (YYYY-MM-DD) the search tiers are cut at (search-index.ts). SEARCH_DAY_OFFSET_DAYS moves
 * it, so a test or bench can play the next day's compaction without waiting for midnight.
 */
export function searchDay(now = Date.now()): string {
  const offset = Number(process.env.SEARCH_DAY_OFFSET_DAYS ?? 0);
  return new Date(now + (Number.isFinite(offset) ? offset : 0) * 86_400_000).toISOString().slice(0, 10);
}
