/** When the feed scheduler considers a source due: interval, per-source spread and Retry-After. */
import { describe, expect, it } from 'vitest';
import { nextDueAt } from '../../src/server/ingest/feed-scheduler.ts';
import { retryAfterTime } from '../../src/server/ingest/feed-fetch.ts';
import type { NewsSource } from '../../src/schemas/source.ts';

const INTERVAL = 15 * 60_000;
const source = (id: string, extra: Partial<NewsSource> = {}): NewsSource => ({
  id,
  name: id,
  type: 'rss',
  url: 'https://news.example.org/feed.xml',
  section: 'world',
  enabled: true,
  createdAt: '2025-01-01T00:00:00.000Z',
  ...extra,
});

describe('nextDueAt', () => {
  it('is one interval after the last fetch (or creation) plus a stable offset under 20% of the interval', () => {
    const last = Date.parse('2025-01-01T10:00:00.000Z');
    const due = nextDueAt(source('a', { lastFetchedAt: '2025-01-01T10:00:00.000Z' }), INTERVAL);
    expect(due - last).toBeGreaterThanOrEqual(INTERVAL);
    expect(due - last).toBeLessThan(INTERVAL * 1.2);
    expect(nextDueAt(source('a', { lastFetchedAt: '2025-01-01T10:00:00.000Z' }), INTERVAL)).toBe(due);
    expect(nextDueAt(source('never'), INTERVAL)).toBeGreaterThanOrEqual(Date.parse('2025-01-01T00:15:00.000Z'));
  });

  it('spreads sources fetched at the same moment over different slots', () => {
    const slots = new Set(
      Array.from({ length: 20 }, (_, i) => nextDueAt(source(`source-${i}`, { lastFetchedAt: '2025-01-01T10:00:00.000Z' }), INTERVAL)),
    );
    expect(slots.size).toBe(20);
  });

  it('waits for a Retry-After beyond the normal slot', () => {
    const retryAfter = '2025-01-02T00:00:00.000Z';
    expect(nextDueAt(source('b', { lastFetchedAt: '2025-01-01T10:00:00.000Z', retryAfter }), INTERVAL)).toBe(Date.parse(retryAfter));
  });
});

describe('retryAfterTime', () => {
  const now = Date.parse('2025-01-01T00:00:00.000Z');
  it('reads seconds and HTTP dates, falls back without a header, and caps at a day', () => {
    expect(retryAfterTime('120', now, 1000).getTime()).toBe(now + 120_000);
    expect(retryAfterTime('Wed, 01 Jan 2025 01:00:00 GMT', now, 1000).getTime()).toBe(now + 3_600_000);
    expect(retryAfterTime(null, now, 900_000).getTime()).toBe(now + 900_000);
    expect(retryAfterTime('99999999', now, 1000).getTime()).toBe(now + 24 * 3_600_000);
    expect(retryAfterTime('garbage', now, 5000).getTime()).toBe(now + 5000);
  });
});
