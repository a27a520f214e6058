/**
 * Incremental `npm run rebuild` on real data and a real build: after a change set (publish, update,
 * unpublish, delete, a new archive page) it renders only what changed, and its output is
 * byte-identical to a clean `npm run rebuild -- --full` of the same data, also after a server
 * regenerated pages (which it keeps, through the render journal) and the next day, when today's
 * search head has to fold into its month.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, makeOutDir, startServer } from '../helpers/server.ts';
import { adminClient, waitFor } from './support.ts';
import { openStore } from '../../src/store/index.ts';
import { manifestFileFor, readRenderManifest, writeRenderManifest } from '../../src/server/publishing/manifest.ts';
import type { ArticleRecord } from '../../src/schemas/article.ts';
import { articleRecord } from '../unit/support.ts';
import { storeOptionsFor } from '../helpers/postgres.ts';
import { differences, renderedCount, runRebuild, tree } from '../helpers/rebuild.ts';

const fileIn = (clientDir: string, publicPath: string) => path.join(clientDir, ...publicPath.split('/').filter(Boolean), 'index.html');

describe('incremental npm run rebuild', () => {
  const dataDir = makeDataDir('meridian-incremental-');
  const outIncremental = makeOutDir('incremental-');
  const outFull = makeOutDir('full-');
  let clock = Date.parse('2026-02-20T08:00:00.000Z');
  const made: ArticleRecord[] = [];

  const record = (overrides: Partial<ArticleRecord> & { slug: string }) => {
    clock += 3_600_000;
    const at = new Date(clock).toISOString();
    return articleRecord({
      id: overrides.slug,
      title: `Story ${overrides.slug}`,
      createdAt: at,
      updatedAt: at,
      publishedAt: at,
      ...overrides,
    });
  };

  beforeAll(async () => {
    const store = await openStore(dataDir, 'write', await storeOptionsFor(dataDir));
    // 30 business articles over two months (three listing pages), a few elsewhere.
    for (let i = 0; i < 30; i++) {
      const a = record({ slug: `business-${i}`, section: 'business' });
      if (i === 15) clock = Date.parse('2026-03-02T08:00:00.000Z');
      await store.articles.insert(a);
      made.push(a);
    }
    for (let i = 0; i < 4; i++) await store.articles.insert(record({ slug: `culture-${i}`, section: 'culture' }));
    await store.close();
    const first = await runRebuild(outIncremental, dataDir);
    expect(first.code, first.output).toBe(0);
    expect(first.output).toContain('full build: there is no build yet');
  }, 240_000);

  afterAll(() => {
    for (const dir of [dataDir, outIncremental, outFull]) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('with nothing changed it renders only the always-rendered feeds and keeps every file', async () => {
    const before = tree(path.join(outIncremental, 'client'));
    const again = await runRebuild(outIncremental, dataDir);
    expect(again.code, again.output).toBe(0);
    expect(again.output).toMatch(/\[rebuild\] done: incremental: \d+ of \d+ pages rendered \(0 written\), 0 removed, 0 search bundle\(s\)/);
    expect(renderedCount(again.output)).toBeLessThanOrEqual(20);
    expect(differences(tree(path.join(outIncremental, 'client')), before)).toEqual([]);
  }, 120_000);

  it('runs the search jobs a stopped server left in the render manifest, and keeps the others for the next start', async () => {
    const manifestFile = manifestFileFor(path.join(outIncremental, 'client'));
    const manifest = readRenderManifest(manifestFile)!;
    writeRenderManifest(manifestFile, { ...manifest, by: 'server', searchJobs: ['/pagefind/2026-02', '/pagefind/compact'] });
    const run = await runRebuild(outIncremental, dataDir);
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/\[rebuild\] done: incremental: \d+ of \d+ pages rendered \(0 written\), 0 removed, 1 search bundle\(s\)/);
    expect(run.output).toMatch(/search index +1 bundle\(s\) re-indexed, 16 pages/);
    // The compaction is the server's (it runs one at every start): named until then.
    expect(readRenderManifest(manifestFile)?.searchJobs).toEqual(['/pagefind/compact']);
    writeRenderManifest(manifestFile, { ...readRenderManifest(manifestFile)!, searchJobs: undefined });
  }, 120_000);

  it("a headline change re-indexes only its own month's search bundle, though pages of the next month show it in their related reading", async () => {
    const clientDir = path.join(outIncremental, 'client');
    // The newest of February: March's business articles list it in their related reading (older articles are related).
    const february = made[15]!;
    const bundleStamp = (name: string) => fs.statSync(path.join(clientDir, 'pagefind', name)).ino;
    const march = bundleStamp('2026-03');
    const store = await openStore(dataDir, 'write', await storeOptionsFor(dataDir));
    await store.articles.replace({ ...february, title: 'A headline seen next door', updatedAt: new Date(++clock).toISOString() });
    await store.close();

    const run = await runRebuild(outIncremental, dataDir);
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/search index +1 bundle\(s\) re-indexed, 16 pages/);
    // The point of the test: March pages were written again for their related reading (outside what search indexes).
    const showing = made
      .slice(16, 30)
      .filter((a) => fs.readFileSync(fileIn(clientDir, `/article/${a.slug}`), 'utf8').includes('A headline seen next door'));
    expect(showing.length).toBeGreaterThan(0);
    expect(bundleStamp('2026-03')).toBe(march);
  }, 120_000);

  it('an article re-dated into another month leaves the search bundle of its old month too', async () => {
    const clientDir = path.join(outIncremental, 'client');
    const bundleStamp = (name: string) => fs.statSync(path.join(clientDir, 'pagefind', name)).ino;
    const march = bundleStamp('2026-03');
    const store = await openStore(dataDir, 'write', await storeOptionsFor(dataDir));
    await store.articles.replace({ ...made[17]!, publishedAt: '2026-01-15T12:00:00.000Z', updatedAt: new Date(++clock).toISOString() });
    await store.close();

    const run = await runRebuild(outIncremental, dataDir);
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/search index +2 bundle\(s\) re-indexed, 18 pages/);
    expect(bundleStamp('2026-03')).not.toBe(march);
    const periods = JSON.parse(fs.readFileSync(path.join(clientDir, 'pagefind', 'periods.json'), 'utf8')) as { periods: string[] };
    expect(periods.periods).toEqual(['2026-03', '2026-02', '2026-01']);
  }, 120_000);

  it('after publish, update, unpublish, delete and a new archive page its output equals a clean full build byte for byte', async () => {
    const store = await openStore(dataDir, 'write', await storeOptionsFor(dataDir));
    // Publish: 9 new business articles (37 published once two leave below: a fourth listing page opens).
    for (let i = 30; i < 39; i++) await store.articles.insert(record({ slug: `business-${i}`, section: 'business' }));
    // Update: a new headline on an old article; unpublish one; delete one.
    const edited = made[3]!;
    await store.articles.replace({ ...edited, title: 'A corrected headline', updatedAt: new Date(++clock).toISOString() });
    await store.articles.replace({ ...made[20]!, status: 'draft', updatedAt: new Date(++clock).toISOString() });
    await store.articles.delete(made[25]!.id);
    // Gated (issue 48): its page (teaser, paywall island, JSON-LD) drawn by the render twin must equal the build's.
    const story = [
      '<p>The teaser opens.</p>',
      '<p>It goes on.</p>',
      ...Array.from({ length: 5 }, (_, i) => `<p>Gated paragraph ${i}.</p>`),
    ];
    await store.articles.replace({
      ...made[6]!,
      access: 'members',
      bodyHtml: story.join('\n'),
      updatedAt: new Date(++clock).toISOString(),
    });
    await store.close();

    const incremental = await runRebuild(outIncremental, dataDir);
    expect(incremental.code, incremental.output).toBe(0);
    expect(incremental.output).toMatch(/\[rebuild\] done: incremental: /);
    console.log(
      incremental.output
        .split('\n')
        .filter((l) => /incremental:|pages rendered|pages removed|search index/.test(l))
        .join('\n'),
    );
    // Far fewer than the ~80 pages of the site: the changed articles, business listings, feeds, sitemaps, and
    // (issue 35) the author's archive files and the article pages whose related reading showed a changed article.
    expect(renderedCount(incremental.output)).toBeLessThan(55);
    expect(fs.existsSync(path.join(outIncremental, 'client', 'article', made[25]!.slug))).toBe(false);
    expect(fs.existsSync(path.join(outIncremental, 'client', 'article', made[20]!.slug))).toBe(false);
    expect(fs.existsSync(path.join(outIncremental, 'client', 'section', 'business', 'page', '4', 'index.html'))).toBe(true);
    const gated = fs.readFileSync(fileIn(path.join(outIncremental, 'client'), `/article/${made[6]!.slug}`), 'utf8');
    expect(gated).toContain('data-testid="paywall"');
    expect(gated).not.toContain('Gated paragraph');

    const full = await runRebuild(outFull, dataDir, ['--full']);
    expect(full.code, full.output).toBe(0);
    expect(full.output).toContain('full build: --full was given');
    expect(differences(tree(path.join(outIncremental, 'client')), tree(path.join(outFull, 'client')))).toEqual([]);
  }, 240_000);

  it('pages the server regenerated are kept as it wrote them (render journal), and the output still equals a full build', async () => {
    const clientDir = path.join(outIncremental, 'client');
    const journalFile = path.join(outIncremental, 'render-journal.ndjson');
    const edited = made[5]!;
    // The server serves the built folder itself, as in production.
    const server = await startServer({ dataDir, env: { OUT_DIR: outIncremental, SERVE_DIR: clientDir } });
    try {
      const admin = await adminClient(server);
      expect((await admin.put(`/api/articles/${edited.id}`, { title: 'A headline the server rendered' })).status).toBe(200);
      await waitFor('the worker to write and journal the article page', async () => {
        const health = (await (await fetch(`${server.url}/api/health`)).json()) as { jobs: number };
        return health.jobs === 0 && fs.existsSync(journalFile) && fs.readFileSync(journalFile, 'utf8').includes(`/article/${edited.slug}"`);
      });
    } finally {
      await server.stop();
    }
    expect(fs.readFileSync(fileIn(clientDir, `/article/${edited.slug}`), 'utf8')).toContain('A headline the server rendered');

    const incremental = await runRebuild(outIncremental, dataDir);
    expect(incremental.code, incremental.output).toBe(0);
    // The article page and its listing file were the server's, from the data as it is: kept, not rendered again.
    expect(Number(/pages kept +(\d+) as the server rendered them/.exec(incremental.output)?.[1])).toBeGreaterThanOrEqual(2);
    expect(incremental.output).toMatch(/\[rebuild\] done: incremental: \d+ of \d+ pages rendered \(0 written\)/);
    expect(fs.existsSync(journalFile)).toBe(false);
    expect(fs.existsSync(`${journalFile}.taken`)).toBe(false);

    // Kept means recorded: the next rebuild finds them current without the journal.
    const again = await runRebuild(outIncremental, dataDir);
    expect(again.code, again.output).toBe(0);
    expect(again.output).toMatch(/pages kept +0 as the server rendered them/);
    // Nothing the server drew was drawn again: both rebuilds drew only the files drawn every time (feeds, robots).
    expect(renderedCount(incremental.output), incremental.output).toBe(renderedCount(again.output));

    const full = await runRebuild(outFull, dataDir, ['--full']);
    expect(full.code, full.output).toBe(0);
    expect(differences(tree(clientDir), tree(path.join(outFull, 'client')))).toEqual([]);
  }, 240_000);

  it("today's articles go in the search head; the next day an incremental rebuild folds it into its month like a full build", async () => {
    const store = await openStore(dataDir, 'write', await storeOptionsFor(dataDir));
    const now = new Date().toISOString();
    await store.articles.insert(
      articleRecord({
        id: 'today-1',
        slug: 'today-1',
        title: 'Story today-1',
        section: 'culture',
        createdAt: now,
        updatedAt: now,
        publishedAt: now,
      }),
    );
    await store.close();
    const today = now.slice(0, 10);
    const periods = (out: string) =>
      (JSON.parse(fs.readFileSync(path.join(out, 'client', 'pagefind', 'periods.json'), 'utf8')) as { periods: string[] }).periods;

    const same = await runRebuild(outIncremental, dataDir);
    expect(same.code, same.output).toBe(0);
    expect(periods(outIncremental)).toEqual([`head-${today}`, '2026-03', '2026-02', '2026-01']);

    const nextDay = { SEARCH_DAY_OFFSET_DAYS: '1' };
    const incremental = await runRebuild(outIncremental, dataDir, [], nextDay);
    expect(incremental.code, incremental.output).toBe(0);
    expect(incremental.output).toMatch(
      /\[rebuild\] done: incremental: \d+ of \d+ pages rendered \(0 written\), 0 removed, 1 search bundle\(s\)/,
    );
    const tomorrow = new Date(Date.parse(now) + 86_400_000).toISOString().slice(0, 10);
    const home = tomorrow.slice(0, 7) === today.slice(0, 7) ? today : today.slice(0, 7);
    expect(periods(outIncremental)).toEqual([home, '2026-03', '2026-02', '2026-01']);
    expect(fs.existsSync(path.join(outIncremental, 'client', 'pagefind', `head-${today}`))).toBe(false);

    const full = await runRebuild(outFull, dataDir, ['--full'], nextDay);
    expect(full.code, full.output).toBe(0);
    expect(differences(tree(path.join(outIncremental, 'client')), tree(path.join(outFull, 'client')))).toEqual([]);
  }, 240_000);
});
