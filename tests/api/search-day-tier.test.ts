/**
 * Today's search tier on the real server: a day with more articles than HEAD_MAX is cut into full
 * blocks and a small head, and a publish re-indexes the head (at most HEAD_MAX pages), not the day.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { chromium } from 'playwright-core';
import { makeDataDir, startServer, type TestServer } from '../helpers/server.ts';
import { openStore } from '../../src/store/index.ts';
import { storeOptionsFor } from '../helpers/postgres.ts';
import { HEAD_MAX } from '../../src/server/publishing/search-index.ts';
import { articleRecord } from '../unit/support.ts';
import { adminClient, clearOfMidnight, createArticle, type TestClient, waitFor, waitForQuietPublishing } from './support.ts';

/** This file's waits are long ones (whole bundles re-indexed, many pages rendered). */
const waitLong = <T>(what: string, check: () => Promise<T | undefined | false>) => waitFor(what, check, 90_000);

describe("today's search tier", () => {
  let server: TestServer;
  let admin: TestClient;
  const DAY = HEAD_MAX * 2 + 3;
  let today = '';

  const periodsOnServer = async () => {
    const response = await fetch(new URL('/pagefind/periods.json', server.url));
    return response.ok ? ((await response.json()) as { periods: string[] }).periods : [];
  };
  /** Pages indexed by each "search index rebuilt" line of a bundle, in order. */
  const rebuilds = (bundle: string) =>
    server
      .output()
      .split('\n')
      .filter((l) => l.includes('search index rebuilt') && l.endsWith(`(bundle ${bundle})`))
      .map((l) => Number(/rebuilt: (\d+) pages/.exec(l)![1]));
  const entryOf = (bundle: string) => fs.statSync(path.join(server.clientDir, 'pagefind', bundle, 'pagefind-entry.json'));

  // Today's bundle names are taken once: the file runs within one UTC day.
  beforeAll(() => clearOfMidnight(), 11 * 60_000);

  beforeAll(async () => {
    const dataDir = makeDataDir();
    const store = await openStore(dataDir, 'write', await storeOptionsFor(dataDir));
    // A busy day: published over the last few seconds (today, unless the test starts at midnight).
    const now = Date.now();
    today = new Date(now).toISOString().slice(0, 10);
    for (let i = 0; i < DAY; i++) {
      const at = new Date(Math.max(Date.parse(`${today}T00:00:00.000Z`), now - 60_000 + i * 100)).toISOString();
      await store.articles.insert(
        articleRecord({
          id: `busy-${i}`,
          slug: `busy-${i}`,
          title: `Busy day story ${i}`,
          section: 'world',
          createdAt: at,
          updatedAt: at,
          publishedAt: at,
        }),
      );
    }
    await store.close();
    server = await startServer({ dataDir });
    admin = await adminClient(server);
  }, 120_000);

  beforeEach(() => {
    onTestFailed(() => console.log(`--- server output (tail) ---\n${server.output().slice(-6000)}`));
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('cuts the day into full blocks and a head, and a publish re-indexes only the head', async () => {
    const head = `head-${today}`;
    const blocks = [`${today}-b001`, `${today}-b000`];
    // periods.json is swapped before the compaction logs its builds: the baseline waits for both.
    await waitLong(
      'the day tier listed and its builds logged',
      async () =>
        JSON.stringify(await periodsOnServer()) === JSON.stringify([head, ...blocks]) &&
        server.output().includes(`now ${[head, ...blocks].join(', ')}`),
    );
    const before = Object.fromEntries(blocks.map((b) => [b, { builds: rebuilds(b).length, entry: entryOf(b) }]));
    const headBuilds = rebuilds(head).length;

    const article = await createArticle(admin, { title: 'The heron bulletin', section: 'world', status: 'published' });
    expect(article.publishedAt!.slice(0, 10)).toBe(today);
    await waitLong('the head re-indexed after the publish', async () => rebuilds(head).length > headBuilds && rebuilds(head).at(-1)! >= 4);
    // The head: the three past the full blocks and the new one, not the day's 52.
    expect(rebuilds(head).at(-1)).toBe(4);
    // Whatever the publish queued has run: a block re-indexed would have been logged by now.
    await waitForQuietPublishing(admin);
    for (const block of blocks) {
      expect(rebuilds(block).length, block).toBe(before[block]!.builds);
      expect(entryOf(block).ino, block).toBe(before[block]!.entry.ino);
    }
    expect(await periodsOnServer()).toEqual([head, ...blocks]);
    for (const line of server
      .output()
      .split('\n')
      .filter((l) => l.includes('search index rebuilt')))
      expect(Number(/rebuilt: (\d+) pages/.exec(line)![1]), line).toBeLessThanOrEqual(HEAD_MAX);
  });

  it('an edit of an article in a full block re-indexes that block and the head, not the other block', async () => {
    const head = `head-${today}`;
    const [b000, b001] = [`${today}-b000`, `${today}-b001`];
    const before = { b000: rebuilds(b000).length, b001: rebuilds(b001).length, head: rebuilds(head).length };
    const response = await admin.put('/api/articles/busy-5', { title: 'Busy day story renamed to kestrel' });
    expect(response.status).toBe(200);
    await waitLong('the block re-indexed', async () => rebuilds(b000).length > before.b000);
    await waitLong('the head re-indexed', async () => rebuilds(head).length > before.head);
    await waitForQuietPublishing(admin);
    expect(rebuilds(b001).length).toBe(before.b001);
    expect(rebuilds(b000).at(-1)).toBe(HEAD_MAX);
  });

  it('Chromium finds articles of the head and of a full block through Pagefind alone', async () => {
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    });
    try {
      for (const [query, title] of [
        ['heron', 'The heron bulletin'],
        ['kestrel', 'Busy day story renamed to kestrel'],
      ] as const) {
        const context = await browser.newContext();
        // Only the Pagefind bundles can answer.
        await context.route('**/api/search**', (route) => route.abort());
        const page = await context.newPage();
        await page.goto(new URL(`/search?q=${query}`, server.url).href);
        const grid = page.getByRole('list', { name: 'Search results' });
        await grid.getByTestId('article-card').first().waitFor({ timeout: 15_000 });
        expect(await grid.getAttribute('data-engine'), query).toBe('pagefind');
        expect(await grid.locator('.card-title').allTextContents(), query).toContain(title);
        await context.close();
      }
    } finally {
      await browser.close();
    }
    // Page loads that each start Pagefind's WebAssembly: seconds each, several times that beside a loaded CI.
  }, 90_000);
});
