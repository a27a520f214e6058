/**
 * The render state file: the worker's first start on a folder in the layout before it (the five files
 * 1.0.0 writes, made here as it wrote them) moves them into render-state.json and renders nothing; the
 * manifest's line is rewritten without touching the page lines; a torn file costs a re-check, not a crash.
 * The header changes in place (the file keeps its inode, the page lines their bytes) until it outgrows its
 * reserved line; a header whose checksum fails reads as empty.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, onTestFailed } from 'vitest';
import { articleWritesPending } from '../../src/server/runtime.ts';
import { startRegenerationWorker } from '../../src/server/publishing/worker.ts';
import { manifestFileFor, readRenderManifest, writeRenderManifest } from '../../src/server/publishing/manifest.ts';
import { articlePageInput, readRenderState, writeRenderState } from '../../src/server/publishing/render-inputs.ts';
import {
  readRenderStateHeader,
  readRenderStatePages,
  renderStateFileFor,
  updateRenderStateHeader,
  updateRenderStateHeaderAsync,
  writeRenderStateFile,
} from '../../src/server/publishing/render-state.ts';
import { PAGEFIND_DIR, PERIODS_FILE } from '../../src/server/publishing/search-periods.ts';
import { articleRecord, closeQuietly, collectingLog, makeRuntime, makeTempDir } from './support.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function waitFor(check: () => boolean, timeoutMs = 15_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await sleep(10);
  }
  return false;
}

describe('render state', () => {
  it("moves 1.0.0's render files into render-state.json at the worker's first start, and renders nothing for it", async () => {
    const runtime = await makeRuntime();
    cleanups.push(() => closeQuietly(runtime.store));
    await runtime.store.articles.insert(articleRecord({ slug: 'kept', publishedAt: '2025-01-15T10:00:00.000Z' }));
    const article = (await runtime.store.articles.getBySlug('kept'))!;
    const outDir = makeTempDir('meridian-render-state-');
    const clientDir = path.join(outDir, 'client');
    const page = path.join(clientDir, 'article', 'kept', 'index.html');
    fs.mkdirSync(path.dirname(page), { recursive: true });
    fs.writeFileSync(page, '<!doctype html><title>Kept</title><main data-pagefind-body>Kept</main>');
    const stat = fs.statSync(page);
    // The five files as 1.0.0 writes them: the manifest (pretty JSON), the rebuild's page records, the
    // worker's journal (one line per page), and the search index's list and day tier inside the served folder.
    const manifest = {
      storeId: runtime.store.id,
      version: await runtime.store.articles.version(),
      renderedAt: '2026-11-20T10:00:00.000Z',
      by: 'server' as const,
      siteUrl: runtime.config.SITE_URL,
    };
    fs.writeFileSync(path.join(outDir, 'render-manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    const pages = { '/article/kept': { i: articlePageInput(article), m: stat.mtimeMs, s: stat.size, p: '2025-01' } };
    fs.writeFileSync(path.join(outDir, 'render-pages.json'), `${JSON.stringify({ build: 'b1', storeId: runtime.store.id, pages })}\n`);
    const journalLine = `${JSON.stringify({ path: '/article/kept', i: articlePageInput(article), m: stat.mtimeMs, s: stat.size })}\n`;
    fs.writeFileSync(path.join(outDir, 'render-journal.ndjson'), journalLine);
    const pagefind = path.join(clientDir, PAGEFIND_DIR);
    fs.mkdirSync(path.join(pagefind, '2025-01'), { recursive: true });
    fs.writeFileSync(path.join(pagefind, '2025-01', 'pagefind-entry.json'), '{}');
    fs.writeFileSync(path.join(pagefind, PERIODS_FILE), JSON.stringify({ periods: ['2025-01'] }));
    const dayTier = { 'head-2026-11-20': ['older'] };
    fs.writeFileSync(path.join(pagefind, '.day-tier.json'), JSON.stringify(dayTier));

    const rendered: string[] = [];
    const logged: string[] = [];
    onTestFailed(() => console.log(`the worker's log:\n${logged.join('\n')}`));
    const worker = startRegenerationWorker(runtime, {
      clientDir,
      writesPending: () => articleWritesPending(runtime),
      log: collectingLog(logged),
      render: async (publicPath) => {
        rendered.push(publicPath);
        return { kind: 'page', body: new TextEncoder().encode(publicPath) };
      },
    });
    cleanups.push(() => worker.stop());
    expect(await waitFor(() => logged.some((line) => line.includes('search bundles compacted')))).toBe(true);

    expect(rendered).toEqual([]);
    expect(logged.some((line) => line.startsWith('[publish] reconciling'))).toBe(false);
    expect(logged).toContain('[publish] moved the render manifest, page records and search day tier into render-state.json');
    for (const gone of ['render-manifest.json', 'render-pages.json', 'client/pagefind/.day-tier.json'])
      expect(fs.existsSync(path.join(outDir, gone)), gone).toBe(false);
    // The journal (appended per page) and periods.json (read by browsers) stay where they were.
    expect(fs.readFileSync(path.join(outDir, 'render-journal.ndjson'), 'utf8')).toBe(journalLine);
    expect(fs.existsSync(path.join(pagefind, PERIODS_FILE))).toBe(true);
    const file = renderStateFileFor(clientDir);
    expect(file).toBe(path.join(outDir, 'render-state.json'));
    expect(readRenderManifest(file)).toEqual(manifest);
    expect(readRenderState(file)).toEqual({ build: 'b1', storeId: runtime.store.id, pages });
    // Yesterday's tier is not listed: the start-up compaction forgets it.
    expect(readRenderStateHeader(file).dayTier?.['head-2026-11-20']).toBeUndefined();
  });

  it("rewrites the manifest's line without the page lines, and a torn file costs a re-check", () => {
    const clientDir = path.join(makeTempDir('meridian-render-state-'), 'client');
    const file = manifestFileFor(clientDir);
    expect(readRenderManifest(file)).toBeUndefined();
    expect(readRenderState(file)).toBeUndefined();
    const pages = { '/article/a': { i: 'x', m: 1, s: 2 }, '/section/world': { i: 'y', m: 3, s: 4 } };
    writeRenderState(file, { build: 'b', storeId: 's', pages });
    const manifest = { storeId: 's', version: 3, renderedAt: '2026-11-27T00:00:00.000Z', by: 'server' as const };
    writeRenderManifest(file, manifest);
    expect(readRenderManifest(file)).toEqual(manifest);
    expect(readRenderState(file)).toEqual({ build: 'b', storeId: 's', pages });
    // A rebuild's record keeps the manifest too.
    writeRenderState(file, { build: 'b2', storeId: 's', pages: {} });
    expect(readRenderManifest(file)).toEqual(manifest);
    expect(fs.readFileSync(file, 'utf8').split('\n')).toHaveLength(2);

    fs.writeFileSync(file, `{"format":1,"manifest":{"storeId":"s"\n{"path":"/article/a","i":"x","m":1,"s":2}\n`);
    expect(readRenderManifest(file)).toBeUndefined();
    expect(readRenderState(file)).toBeUndefined();
  });
  it('changes the header in place, keeping the page lines byte for byte, until it outgrows its line', async () => {
    const file = path.join(makeTempDir('meridian-render-state-'), 'render-state.json');
    const pages = Object.fromEntries(Array.from({ length: 5000 }, (_, n) => [`/article/a-${n}`, { i: `i${n}`, m: n, s: n * 2 }]));
    writeRenderStateFile(file, (header) => ({ ...header, rebuild: { build: 'b', storeId: 's' } }), pages);
    const pageBytes = () => {
      const bytes = fs.readFileSync(file);
      return bytes.subarray(bytes.indexOf(10) + 1);
    };
    const before = { ino: fs.statSync(file).ino, size: fs.statSync(file).size, pages: pageBytes() };
    const headerLength = () => fs.readFileSync(file).indexOf(10) + 1;
    expect(headerLength() % 4096).toBe(0);

    const manifest = { storeId: 's', version: 7, renderedAt: '2026-11-28T06:00:00.000Z', by: 'server' as const };
    updateRenderStateHeader(file, (header) => ({ ...header, manifest }));
    await updateRenderStateHeaderAsync(file, (header) => ({ ...header, dayTier: { 'head-2026-11-28': ['a-1', 'a-2'] } }));
    expect(fs.statSync(file)).toMatchObject({ ino: before.ino, size: before.size });
    expect(pageBytes().equals(before.pages)).toBe(true);
    expect(readRenderStateHeader(file)).toEqual({
      format: 1,
      rebuild: { build: 'b', storeId: 's' },
      manifest,
      dayTier: { 'head-2026-11-28': ['a-1', 'a-2'] },
    });

    // A day's slugs that outgrow the reserved line: the file is written again with a larger one.
    const slugs = Array.from({ length: 400 }, (_, n) => `a-long-article-slug-of-the-day-${n}`);
    await updateRenderStateHeaderAsync(file, (header) => ({ ...header, dayTier: { 'head-2026-11-28': slugs } }));
    expect(fs.statSync(file).ino).not.toBe(before.ino);
    expect(headerLength() % 4096).toBe(0);
    expect(headerLength()).toBeGreaterThan(2 * JSON.stringify(slugs).length);
    expect(pageBytes().equals(before.pages)).toBe(true);
    expect(readRenderStateHeader(file).dayTier).toEqual({ 'head-2026-11-28': slugs });
    expect(readRenderStatePages(file)).toEqual(pages);
    // And in place again from there.
    const grown = fs.statSync(file).ino;
    updateRenderStateHeader(file, (header) => ({ ...header, manifest: { ...manifest, version: 8 } }));
    expect(fs.statSync(file).ino).toBe(grown);
    expect(readRenderStateHeader(file).manifest?.version).toBe(8);
  });

  it('a header whose checksum fails reads as empty; a plain JSON header (the first files written) still reads', () => {
    const file = path.join(makeTempDir('meridian-render-state-'), 'render-state.json');
    const manifest = { storeId: 's', version: 3, renderedAt: '2026-11-27T00:00:00.000Z', by: 'server' as const };
    writeRenderStateFile(file, (header) => ({ ...header, manifest }), { '/about': { i: 'x', m: 1, s: 2 } });
    expect(readRenderStateHeader(file).manifest).toEqual(manifest);
    // One digit of the version changed as a half-done write would leave it: valid JSON, wrong checksum.
    const text = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, text.replace('"version":3', '"version":4'));
    expect(readRenderStateHeader(file)).toEqual({ format: 1 });
    expect(readRenderStatePages(file)).toEqual({ '/about': { i: 'x', m: 1, s: 2 } });

    fs.writeFileSync(file, `${JSON.stringify({ format: 1, manifest })}\n{"path":"/about","i":"x","m":1,"s":2}\n`);
    expect(readRenderStateHeader(file).manifest).toEqual(manifest);
    updateRenderStateHeader(file, (header) => ({ ...header, manifest: { ...manifest, version: 5 } }));
    expect(fs.readFileSync(file).indexOf(10) + 1).toBe(4096);
    expect(readRenderStateHeader(file).manifest?.version).toBe(5);
    expect(readRenderStatePages(file)).toEqual({ '/about': { i: 'x', m: 1, s: 2 } });
  });
});
