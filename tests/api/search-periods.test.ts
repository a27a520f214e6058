/**
 * Search bundles in tiers on the real server: a start without an index builds one bundle per closed
 * month, a publish re-indexes only today's head (the others stay the same files), an edit of an old
 * article only its month, Chromium finds articles of every bundle, and the next day's compaction
 * folds the head into its month with every article findable exactly once throughout.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { makeDataDir, startServer, type TestServer } from '../helpers/server.ts';
import { openStore } from '../../src/store/index.ts';
import { articleRecord } from '../unit/support.ts';
import { adminClient, clearOfMidnight, createArticle, type TestClient, waitFor, waitForQuietPublishing } from './support.ts';
import { storeOptionsFor } from '../helpers/postgres.ts';

/** Four past months of articles, each with a word of its own, written before the server starts. */
const MONTHS = [
  { period: '2024-10', word: 'bergamasque', day: '2024-10-08T09:00:00.000Z' },
  { period: '2024-11', word: 'calliopean', day: '2024-11-12T09:00:00.000Z' },
  { period: '2025-03', word: 'zephyrine', day: '2025-03-14T09:00:00.000Z' },
  { period: '2025-04', word: 'quillwort', day: '2025-04-20T09:00:00.000Z' },
] as const;

describe('search bundles per month', () => {
  let server: TestServer;
  let admin: TestClient;
  let browser: Browser;

  const periodsOnServer = async () =>
    ((await (await fetch(new URL('/pagefind/periods.json', server.url))).json()) as { periods: string[] }).periods;
  const rebuilt = (period: string) =>
    server
      .output()
      .split('\n')
      .filter((l) => l.includes('search index rebuilt') && l.endsWith(`(bundle ${period})`)).length;
  const entryOf = (period: string) => fs.statSync(path.join(server.clientDir, 'pagefind', period, 'pagefind-entry.json'));

  /** Searches in Chromium and answers the titles shown, the engine that answered and the bundles it loaded. */
  async function searchInBrowser(
    query: string,
    pageNumber = 1,
  ): Promise<{ engine: string | null; titles: string[]; bundles: string[]; summary: string }> {
    const page = await browser.newPage();
    const bundles: string[] = [];
    // Context-wide, so requests of Pagefind's web worker count too.
    page.context().on('request', (request) => {
      const name = /\/pagefind\/([^/]+)\/pagefind-entry\.json/.exec(new URL(request.url()).pathname)?.[1];
      if (name) bundles.push(name);
    });
    try {
      await page.goto(new URL(`/search?q=${encodeURIComponent(query)}${pageNumber > 1 ? `&page=${pageNumber}` : ''}`, server.url).href);
      const grid = page.getByRole('list', { name: 'Search results' });
      await grid.getByTestId('article-card').first().waitFor({ timeout: 15_000 });
      return {
        engine: await grid.getAttribute('data-engine'),
        titles: await grid.locator('.card-title').allTextContents(),
        bundles: [...new Set(bundles)].sort(),
        summary: (await page.getByTestId('results-summary').textContent()) ?? '',
      };
    } finally {
      await page.close();
    }
  }

  // Today's bundle names are taken once: the file runs within one UTC day.
  beforeAll(() => clearOfMidnight(), 11 * 60_000);

  beforeAll(async () => {
    const dataDir = makeDataDir();
    const store = await openStore(dataDir, 'write', await storeOptionsFor(dataDir));
    for (const { period, word, day } of MONTHS) {
      // Twelve each: a full page of results from one month, so the recent bundles can answer alone.
      for (let i = 0; i < 12; i++) {
        const at = new Date(Date.parse(day) + i * 3_600_000).toISOString();
        await store.articles.insert(
          articleRecord({
            id: `${period}-${i}`,
            slug: `${word}-${i}`,
            title: `The ${word} report ${i}`,
            section: 'culture',
            createdAt: at,
            updatedAt: at,
            publishedAt: at,
          }),
        );
      }
    }
    await store.close();
    server = await startServer({ dataDir, env: { TRUST_PROXY: 'true' } });
    admin = await adminClient(server);
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    });
  }, 120_000);

  beforeEach(() => {
    onTestFailed(() => console.log(`--- server output (tail) ---\n${server.output().slice(-6000)}`));
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('a start without an index builds one bundle per month and lists them newest first', async () => {
    await waitFor('both months indexed', async () => {
      const response = await fetch(new URL('/pagefind/periods.json', server.url));
      // periods.json is swapped before the compaction logs its builds, which the next test counts from.
      return (
        response.ok &&
        JSON.stringify(((await response.json()) as { periods: string[] }).periods) ===
          JSON.stringify(['2025-04', '2025-03', '2024-11', '2024-10']) &&
        server.output().includes('now 2025-04, 2025-03, 2024-11, 2024-10')
      );
    });
    for (const { period } of MONTHS) expect((await fetch(new URL(`/pagefind/${period}/pagefind.js`, server.url))).status).toBe(200);
  });

  it("a publish re-indexes today's head only; Chromium finds every bundle's articles", async () => {
    const old = Object.fromEntries(MONTHS.map(({ period }) => [period, { builds: rebuilt(period), entry: entryOf(period) }]));
    const article = await createArticle(admin, {
      title: 'The marmoset dispatch',
      section: 'culture',
      status: 'published',
      dek: 'A marmoset story.',
    });
    const head = `head-${article.publishedAt!.slice(0, 10)}`;
    // The build is logged after periods.json names the head.
    await waitFor('the head in periods.json', async () => (await periodsOnServer()).includes(head) && rebuilt(head) > 0);
    expect(await periodsOnServer()).toEqual([head, '2025-04', '2025-03', '2024-11', '2024-10']);
    expect(rebuilt(head)).toBe(1);
    for (const { period } of MONTHS) {
      expect(rebuilt(period), period).toBe(old[period]!.builds);
      expect(entryOf(period).mtimeMs, period).toBe(old[period]!.entry.mtimeMs);
      expect(entryOf(period).ino, period).toBe(old[period]!.entry.ino);
    }
    for (const [query, title] of [
      ['marmoset', 'The marmoset dispatch'],
      ['zephyrine', 'The zephyrine report 0'],
      ['quillwort', 'The quillwort report 2'],
    ]) {
      const { engine, titles } = await searchInBrowser(query!);
      expect(engine, query).toBe('pagefind');
      expect(titles, query).toContain(title);
    }
  }, 90_000);

  it('the first query loads the four newest bundles only; a query they cannot fill a page for merges the older ones', async () => {
    const head = (await periodsOnServer())[0]!;
    const recent = await searchInBrowser('quillwort');
    expect(recent.titles).toHaveLength(12);
    expect(recent.bundles).toEqual([head, '2025-04', '2025-03', '2024-11'].sort());
    expect(recent.summary).toContain('(12+ results, page 1 of 1+)');
    const old = await searchInBrowser('bergamasque');
    expect(old.titles).toContain('The bergamasque report 1');
    expect(old.bundles).toEqual([head, '2025-04', '2025-03', '2024-11', '2024-10'].sort());
    expect(old.summary).toContain('(12 results)');
    // 'report' is in every month: the recent bundles fill three pages ("36+", "page 1 of 3+"); the
    // fourth page, past them, merges the rest.
    expect((await searchInBrowser('report', 3)).summary).toContain('(36+ results, page 3 of 3+)');
    const paged = await searchInBrowser('report', 4);
    expect(paged.bundles).toEqual([head, '2025-04', '2025-03', '2024-11', '2024-10'].sort());
    expect(paged.summary).toContain('(48 results, page 4 of 4)');
  }, 90_000);

  it('an edit of an old article re-indexes its month, not the others', async () => {
    const periods = await periodsOnServer();
    const before = Object.fromEntries(periods.map((p) => [p, rebuilt(p)]));
    const response = await admin.put('/api/articles/2025-03-1', { title: 'The zephyrine report renamed' });
    expect(response.status).toBe(200);
    await waitFor('2025-03 re-indexed', async () => rebuilt('2025-03') > before['2025-03']!);
    // Whatever the edit queued has run: another bundle re-indexed would have been logged by now.
    await waitForQuietPublishing(admin);
    for (const period of periods.filter((p) => p !== '2025-03')) expect(rebuilt(period), period).toBe(before[period]);
    const { titles } = await searchInBrowser('zephyrine');
    expect(titles).toContain('The zephyrine report renamed');
  });

  it('the next day a compaction folds the head into its month: the article is found exactly once before, during and after', async () => {
    const head = (await periodsOnServer()).find((p) => p.startsWith('head-'))!;
    const day = head.slice(5);
    const months = Object.fromEntries(MONTHS.map(({ period }) => [period, entryOf(period)]));
    expect((await searchInBrowser('marmoset')).titles).toEqual(['The marmoset dispatch']);
    const clientDir = server.clientDir;
    const dataDir = server.dataDir;
    await server.stop();
    // The same data and pages, one day later for the search tiers.
    server = await startServer({ dataDir, env: { TRUST_PROXY: 'true', SERVE_DIR: clientDir, SEARCH_DAY_OFFSET_DAYS: '1' } });
    const next = new Date(Date.parse(`${day}T00:00:00.000Z`) + 86_400_000).toISOString().slice(0, 10);
    // Yesterday's article now belongs in the month so far (or, on the last day of a month, the closed month).
    const home = next.slice(0, 7) === day.slice(0, 7) ? day : day.slice(0, 7);
    let searches = 0;
    await waitFor(
      () => `the compaction (periods ${JSON.stringify(searches)})`,
      async () => {
        const periods = await periodsOnServer();
        // While the compaction runs and after: the article in exactly one listed bundle, findable once.
        expect(periods.includes(head) && periods.includes(home), JSON.stringify(periods)).toBe(false);
        const { titles } = await searchInBrowser('marmoset');
        searches++;
        expect(titles).toEqual(['The marmoset dispatch']);
        return !periods.includes(head) && periods.includes(home);
      },
      90_000,
    );
    expect(await periodsOnServer()).toEqual([home, '2025-04', '2025-03', '2024-11', '2024-10']);
    // Retired but still on disk for pages that read the old list; the next compaction removes it.
    expect(fs.existsSync(path.join(clientDir, 'pagefind', head, 'pagefind-entry.json'))).toBe(true);
    // Closed months are not touched by the compaction.
    for (const [period, entry] of Object.entries(months)) {
      expect(entryOf(period).ino, period).toBe(entry.ino);
      expect(entryOf(period).mtimeMs, period).toBe(entry.mtimeMs);
    }
    for (const [query, title] of [
      ['marmoset', 'The marmoset dispatch'],
      ['zephyrine', 'The zephyrine report 0'],
    ]) {
      const { titles } = await searchInBrowser(query!);
      expect(
        titles.filter((t) => t === title),
        query,
      ).toHaveLength(1);
    }
    await server.stop();
    server = await startServer({ dataDir, env: { TRUST_PROXY: 'true', SERVE_DIR: clientDir, SEARCH_DAY_OFFSET_DAYS: '2' } });
    await waitFor('the next compaction', async () => server.output().includes('search bundles compacted'));
    expect(fs.existsSync(path.join(clientDir, 'pagefind', head))).toBe(false);
    expect((await searchInBrowser('marmoset')).titles).toEqual(['The marmoset dispatch']);
  }, 240_000);
});
