/**
 * The worker's search lane over a real store, a real served folder and the real Pagefind indexer:
 * which job re-indexes one bundle in place and which one falls to the compaction of today's plan.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSearchLane, type SearchStats } from '../../src/server/publishing/search-lane.ts';
import { closeSearchIndexer, readPeriodsFile, searchJobPath } from '../../src/server/publishing/search-index.ts';
import { searchDay } from '../../src/server/clock.ts';
import { articleRecord, closeQuietly, collectingLog, makeRuntime, makeTempDir } from './support.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const PAGE = (title: string) =>
  `<!doctype html><html lang="en"><head><title>${title}</title></head><body><main data-pagefind-body><h1>${title}</h1></main></body></html>`;

describe('search lane', () => {
  it("re-indexes today's head in place, leaves an unlisted month to the compaction, then re-indexes that month in place", async () => {
    const runtime = await makeRuntime();
    cleanups.push(() => closeQuietly(runtime.store));
    cleanups.push(() => closeSearchIndexer());
    const clientDir = path.join(makeTempDir('meridian-search-lane-'), 'client');
    const now = new Date().toISOString();
    const articles = [
      articleRecord({ slug: 'today', title: 'Today', publishedAt: now, updatedAt: now }),
      articleRecord({ slug: 'january', title: 'January', publishedAt: '2025-01-15T10:00:00.000Z', updatedAt: '2025-01-15T10:00:00.000Z' }),
    ];
    for (const article of articles) {
      await runtime.store.articles.insert(article);
      fs.mkdirSync(path.join(clientDir, 'article', article.slug), { recursive: true });
      fs.writeFileSync(path.join(clientDir, 'article', article.slug, 'index.html'), PAGE(article.title));
    }
    const logged: string[] = [];
    const stats: SearchStats = { searchBuilds: 0, lastSearchMs: undefined };
    const lane = createSearchLane({ store: runtime.store, clientDir, log: collectingLog(logged), stats });
    const today = searchDay();

    expect((await lane.run(searchJobPath(`head-${today}`))).outcome).toBe('written');
    expect(await readPeriodsFile(clientDir)).toEqual([`head-${today}`]);
    expect(stats.searchBuilds).toBe(1);
    expect(lane.compactedDay()).toBeUndefined();

    // January is not listed yet: indexing it alone could list an article twice, so the job compacts today's plan.
    await lane.run(searchJobPath('2025-01'));
    expect(lane.compactedDay()).toBe(today);
    expect(await readPeriodsFile(clientDir)).toContain('2025-01');
    expect(logged.some((line) => line.startsWith(`[publish] search bundles compacted for ${today}`))).toBe(true);

    // Listed now: re-indexed in place, no compaction.
    const compactions = logged.filter((line) => line.includes('compacted')).length;
    expect((await lane.run(searchJobPath('2025-01'))).outcome).toBe('written');
    expect(logged.at(-1)).toMatch(/^\[publish\] search index rebuilt: 1 pages in \d+ ms \(bundle 2025-01\)$/);
    expect(logged.filter((line) => line.includes('compacted')).length).toBe(compactions);

    await expect(lane.run('/article/today')).rejects.toThrow(/not a search job/);
  });
});
