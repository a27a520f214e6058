/**
 * The worker's search lane over a real store, a real served folder and the real Pagefind indexer:
 * which job re-indexes one bundle in place and which one falls to the compaction of today's plan.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSearchLane, type SearchStats } from '../../src/server/publishing/search-lane.ts';
import { MONTH_IN_WEEKS_FROM, searchJobPath, weekOf } from '../../src/server/publishing/search-index.ts';
import { readPeriodsFile } from '../../src/server/publishing/search-periods.ts';
import { closeSearchIndexer } from '../../src/server/publishing/search-indexer.ts';
import { createRegenerator } from '../../src/server/publishing/regenerator.ts';
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

  it('lays a large closed month out in weeks, and re-indexes only the weeks whose pages or members changed', async () => {
    const runtime = await makeRuntime();
    cleanups.push(() => closeQuietly(runtime.store));
    cleanups.push(() => closeSearchIndexer());
    const clientDir = path.join(makeTempDir('meridian-search-weeks-'), 'client');
    const page = (slug: string, title: string) => {
      fs.mkdirSync(path.join(clientDir, 'article', slug), { recursive: true });
      fs.writeFileSync(path.join(clientDir, 'article', slug, 'index.html'), PAGE(title));
    };
    // One more than a month indexed whole holds, spread over March 2025's 31 days.
    const march = Array.from({ length: MONTH_IN_WEEKS_FROM + 1 }, (_, i) => {
      const at = new Date(Date.UTC(2025, 2, 1 + (i % 31), 8, Math.floor(i / 31))).toISOString();
      return articleRecord({ slug: `march-${i}`, title: `March ${i}`, publishedAt: at, updatedAt: at });
    });
    const april = articleRecord({
      slug: 'april',
      title: 'April',
      publishedAt: '2025-04-02T08:00:00.000Z',
      updatedAt: '2025-04-02T08:00:00.000Z',
    });
    await runtime.store.articles.insertMany([...march, april]);
    for (const article of [...march, april]) page(article.slug, article.title);
    const logged: string[] = [];
    const stats: SearchStats = { searchBuilds: 0, lastSearchMs: undefined };
    const lane = createSearchLane({ store: runtime.store, clientDir, log: collectingLog(logged), stats });

    await lane.run('/pagefind/compact');
    const weeks = ['2025-03-w5', '2025-03-w4', '2025-03-w3', '2025-03-w2', '2025-03-w1'];
    expect(await readPeriodsFile(clientDir)).toEqual(expect.arrayContaining([...weeks, '2025-04']));
    expect(await readPeriodsFile(clientDir)).not.toContain('2025-03');
    expect(fs.existsSync(path.join(clientDir, 'pagefind', '2025-03'))).toBe(false);
    const rebuilt = () =>
      logged.filter((line) => line.startsWith('[publish] search index rebuilt')).map((line) => /bundle (\S+)\)$/.exec(line)![1]);
    const before = rebuilt().length;

    // An edit: its page drawn again, then the month's job (publishing names the month) re-indexes its week alone.
    const edited = march[40]!;
    await new Promise((resolve) => setTimeout(resolve, 20));
    page(edited.slug, 'Zebra crossing');
    expect((await lane.run(searchJobPath('2025-03'))).outcome).toBe('written');
    expect(rebuilt().slice(before)).toEqual([weekOf(edited.publishedAt!.slice(0, 10))]);

    // Moved from its week to another (its page drawn again): the week it joined and the one it left.
    const moved = march.find((a) => weekOf(a.publishedAt!.slice(0, 10)) === '2025-03-w1')!;
    await runtime.store.articles.replace({ ...moved, publishedAt: '2025-03-20T08:00:00.000Z' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    page(moved.slug, moved.title);
    const mark = rebuilt().length;
    await lane.run(searchJobPath('2025-03'));
    expect(rebuilt().slice(mark).sort()).toEqual(['2025-03-w1', '2025-03-w3']);

    // Nothing changed since: the job re-indexes nothing.
    const idle = rebuilt().length;
    expect((await lane.run(searchJobPath('2025-03'))).outcome).toBe('unchanged');
    expect(rebuilt().length).toBe(idle);

    // npm run rebuild names the articles whose own record changed: only their week, though other pages were drawn since.
    const regenerator = createRegenerator({ clientDir, render: async () => ({ kind: 'absent' }) as never });
    const retitled = march[100]!;
    await new Promise((resolve) => setTimeout(resolve, 20));
    for (const other of march.slice(0, 5)) page(other.slug, other.title);
    page(retitled.slug, 'Retitled');
    const { results } = await regenerator.reindexChanged(runtime.store, new Set(['2025-03']), [], new Set([retitled.slug]));
    expect(results.map((r) => r.period)).toEqual([weekOf(retitled.publishedAt!.slice(0, 10))]);
    expect(await readPeriodsFile(clientDir)).toEqual(expect.arrayContaining(weeks));
  });
});
