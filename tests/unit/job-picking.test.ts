/**
 * The regeneration worker's pure pieces: which job each lane runs next (settling, search debounce,
 * retries, priority, pages and search apart) and the purge batches.
 */
import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/schemas/misc.ts';
import {
  laneOf,
  pickJob,
  priorityOf,
  readyAtOf,
  retryDelayMs,
  type JobTiming,
  type PickState,
} from '../../src/server/publishing/job-picking.ts';
import { createPurgeBatch } from '../../src/server/publishing/purge-batch.ts';
import { COMPACT_JOB, REINDEX_ALL_JOB, searchJobPath } from '../../src/server/publishing/search-index.ts';

const T0 = Date.parse('2026-05-01T12:00:00.000Z');
const timing: JobTiming = { settleMs: 100, maxWaitMs: 1000, searchDebounceMs: 500, searchMaxDelayMs: 8000, idlePollMs: 1000 };
const at = (ms: number) => new Date(T0 + ms).toISOString();

/** A job first created at `created` ms and queued again (by the latest save) at `queued` ms. */
function job(path: string, created = 0, queued = created, id = path): Job {
  return { id, path, createdAt: at(created), queuedAt: at(queued), attempts: 0 } as Job;
}
const state = (now: number, extra: Partial<PickState> = {}): PickState => ({
  now: T0 + now,
  lastRendered: new Map(),
  retryAt: new Map(),
  reconciling: false,
  ...extra,
});

describe('job picking', () => {
  it('orders paths: the article, section page 1, feeds, deeper pages, a search bundle, compaction', () => {
    const paths = [
      '/pagefind/compact',
      '/section/world/page/2',
      searchJobPath('head-2026-05-01'),
      '/rss.xml',
      '/section/world',
      '/article/a',
    ];
    expect([...paths].sort((a, b) => priorityOf(a) - priorityOf(b))).toEqual([
      '/article/a',
      '/section/world',
      '/rss.xml',
      '/section/world/page/2',
      searchJobPath('head-2026-05-01'),
      '/pagefind/compact',
    ]);
  });

  it('lets a page settle after its last save, but never longer than the longest wait', () => {
    // Saved at 0, queued again at 50: ready at 150 (quiet for 100 ms).
    expect(readyAtOf(job('/article/a', 0, 50), timing, state(0)) - T0).toBe(150);
    // A burst that keeps re-queuing it still renders 1 s after it was first queued.
    expect(readyAtOf(job('/article/a', 0, 980), timing, state(0)) - T0).toBe(1000);
    // ...or 1 s after it was last rendered, when that is later.
    expect(readyAtOf(job('/article/a', 0, 1990), timing, state(0, { lastRendered: new Map([['/article/a', T0 + 1500]]) })) - T0).toBe(2090);
  });

  it("debounces today's head bundle 500 ms, other bundles 4x longer, both at most 8 s after queuing", () => {
    expect(readyAtOf(job(searchJobPath('head-2026-05-01'), 0, 100), timing, state(0)) - T0).toBe(600);
    expect(readyAtOf(job(searchJobPath('2026-03'), 0, 100), timing, state(0)) - T0).toBe(2100);
    expect(readyAtOf(job(searchJobPath('head-2026-05-01'), 0, 7900), timing, state(0)) - T0).toBe(8000);
  });

  it('holds a failed job until its retry time, backing off from 1 s to at most 5 minutes', () => {
    const failed = job('/article/a');
    expect(readyAtOf(failed, timing, state(0, { retryAt: new Map([[failed.id, T0 + 4000]]) })) - T0).toBe(4000);
    expect([0, 1, 2, 3, 12, 40].map(retryDelayMs)).toEqual([1000, 2000, 4000, 8000, 300_000, 300_000]);
  });

  it('runs the most urgent ready job, and sleeps until the next one is ready', () => {
    const jobs = [job('/section/world/page/3'), job('/article/a', 0, 400), job('/section/world')];
    const first = pickJob(jobs, timing, state(200), 'pages');
    expect(first.job?.path).toBe('/section/world');
    // Nothing ready yet: sleep until the article settles (at 500).
    expect(pickJob([jobs[1]!], timing, state(200), 'pages')).toEqual({ job: undefined, waitMs: 300 });
    expect(pickJob([], timing, state(200), 'pages')).toEqual({ job: undefined, waitMs: 1000 });
  });

  it('keeps search waiting while a page is ready or a reconcile runs, but not for a page waiting on its retry', () => {
    const search = job(COMPACT_JOB);
    const page = job('/article/a', 0, 0, 'page');
    expect(pickJob([search, page], timing, state(5000), 'search').job).toBeUndefined();
    expect(pickJob([search], timing, state(5000, { reconciling: true }), 'search').job).toBeUndefined();
    const retrying = state(5000, { retryAt: new Map([['page', T0 + 60_000]]) });
    expect(pickJob([search, page], timing, retrying, 'search').job?.path).toBe(COMPACT_JOB);
  });

  it('puts search jobs in a lane of their own and every other path in the pages lane', () => {
    expect([COMPACT_JOB, REINDEX_ALL_JOB, searchJobPath('2026-03'), searchJobPath('head-2026-05-01')].map(laneOf)).toEqual([
      'search',
      'search',
      'search',
      'search',
    ]);
    expect(['/article/a', '/section/world', '/rss.xml', '/sitemap-2026-05.xml', '/section/world/page/2'].map(laneOf)).toEqual([
      'pages',
      'pages',
      'pages',
      'pages',
      'pages',
    ]);
  });

  it('never hands the pages lane a search job: a page queued while a compaction is ready or running goes first', () => {
    const compaction = job(COMPACT_JOB);
    const head = job(searchJobPath('head-2026-05-01'), 0, 0, 'head');
    // Only search is queued: the pages lane has nothing to do and polls idly.
    expect(pickJob([compaction, head], timing, state(10_000), 'pages')).toEqual({ job: undefined, waitMs: 1000 });
    // A page queued meanwhile (still listed next to the compaction the search lane is running) is the pages lane's.
    const page = job('/article/a', 10_000, 10_000, 'page');
    expect(pickJob([compaction, head, page], timing, state(10_000), 'pages')).toEqual({ job: undefined, waitMs: 100 });
    expect(pickJob([compaction, head, page], timing, state(10_100), 'pages').job?.path).toBe('/article/a');
  });

  it('lets the search lane run while a page is still settling, and sleep only for its own jobs', () => {
    const head = job(searchJobPath('head-2026-05-01'), 0, 0, 'head');
    const settling = job('/article/b', 10_000, 10_000, 'settling');
    // The page settles at 10,100: not ready, so it does not hold the head's re-index back.
    expect(pickJob([head, settling], timing, state(10_000), 'search').job?.path).toBe(searchJobPath('head-2026-05-01'));
    // A head queued at 10,000 is ready at 10,500: the search lane sleeps 500 ms, not the page's 100.
    const later = job(searchJobPath('head-2026-05-01'), 10_000, 10_000, 'later');
    expect(pickJob([later, settling], timing, state(10_000), 'search')).toEqual({ job: undefined, waitMs: 500 });
    // ...and the most urgent search job goes first: a bundle before the compaction.
    expect(pickJob([job(COMPACT_JOB), head], timing, state(10_000), 'search').job?.id).toBe('head');
  });
});

describe('purge batches', () => {
  it('deduplicates the changed paths and hands a batch over when it is full', () => {
    const batch = createPurgeBatch(3);
    expect(batch.add('/article/a')).toBeUndefined();
    expect(batch.add('/article/a')).toBeUndefined();
    expect(batch.add('/section/world')).toEqual(['/article/a', '/section/world']);
    expect(batch.take()).toEqual([]);
    batch.add('/rss.xml');
    expect(batch.take()).toEqual(['/rss.xml']);
  });
});
