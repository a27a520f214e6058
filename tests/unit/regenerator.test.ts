/**
 * The publishing engine over a real store and a real served folder in a temp dir, with a fake
 * `Renderer` (an injected dependency): what it writes and removes, what it plans for a reconcile and
 * for an incremental rebuild (the worker's render journal included), and which search bundles it re-indexes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ArticleRecord } from '../../src/schemas/article.ts';
import { createRegenerator, type Renderer } from '../../src/server/publishing/regenerator.ts';
import { ALWAYS, articlePageInput } from '../../src/server/publishing/render-inputs.ts';
import { renderJournalFileFor } from '../../src/server/publishing/render-journal.ts';
import { readPeriodsFile } from '../../src/server/publishing/search-periods.ts';
import { planPublicPaths } from '../../src/server/publishing/paths.ts';
import { articleRecord, closeQuietly, makeRuntime, makeTempDir } from './support.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A page big enough to get compressed twins, naming its path and a version the test can bump. */
const PAGE = (publicPath: string, version = 1) =>
  `<!doctype html><html lang="en"><head><title>${publicPath}</title></head><body><main><h1>${publicPath} v${version}</h1>` +
  `<p>${'Words to index and to compress. '.repeat(20)}</p></main></body></html>`;

/** A renderer drawing every path (an article page from its record in `articles`, with its input); `missing` for slugs it does not hold. */
function fakeRenderer(articles: Map<string, ArticleRecord>, rendered: string[] = [], version = { n: 1 }): Renderer {
  return async (publicPath) => {
    rendered.push(publicPath);
    const slug = /^\/article\/(.+)$/.exec(publicPath)?.[1];
    if (slug !== undefined && !articles.has(slug)) return { kind: 'missing' };
    if (slug === undefined) return { kind: 'page', body: new TextEncoder().encode(PAGE(publicPath, version.n)) };
    const article = articles.get(slug)!;
    const body = new TextEncoder().encode(PAGE(`${publicPath} ${article.title}`, version.n));
    return { kind: 'page', body, input: articlePageInput(article) };
  };
}

async function storeWith(...records: ArticleRecord[]) {
  const runtime = await makeRuntime();
  cleanups.push(() => closeQuietly(runtime.store));
  for (const record of records) await runtime.store.articles.insert(record);
  const stored = new Map<string, ArticleRecord>();
  for (const record of records) stored.set(record.slug, (await runtime.store.articles.getBySlug(record.slug))!);
  return { store: runtime.store, stored, clientDir: path.join(makeTempDir('meridian-engine-'), 'client') };
}

describe('regenerator', () => {
  it('writes a page with its compressed twins, keeps identical bytes, removes a missing page with its folder', async () => {
    const { stored, clientDir } = await storeWith(articleRecord({ slug: 'kept' }));
    const version = { n: 1 };
    const engine = createRegenerator({ clientDir, render: fakeRenderer(stored, [], version) });
    const file = path.join(clientDir, 'article', 'kept', 'index.html');

    expect((await engine.regenerate('/article/kept')).outcome).toBe('written');
    expect(fs.readFileSync(file, 'utf8')).toMatch(/\/article\/kept .* v1/);
    expect(fs.existsSync(`${file}.br`) && fs.existsSync(`${file}.gz`)).toBe(true);
    const mtime = fs.statSync(file).mtimeMs;
    expect((await engine.regenerate('/article/kept')).outcome).toBe('unchanged');
    expect(fs.statSync(file).mtimeMs).toBe(mtime);
    version.n = 2;
    const again = await engine.regenerate('/article/kept');
    expect(again.outcome).toBe('written');
    expect(new TextDecoder().decode(again.body)).toContain('v2');

    stored.delete('kept');
    expect(await engine.regenerate('/article/kept')).toMatchObject({ outcome: 'deleted', body: undefined });
    expect(fs.existsSync(path.dirname(file))).toBe(false);
    expect((await engine.regenerate('/article/kept')).outcome).toBe('absent');
    await expect(engine.regenerate('/admin')).rejects.toThrow(/Refusing/);
  });

  it("notes the pages it writes in the render journal only when asked (the server's worker)", async () => {
    const { stored, clientDir } = await storeWith(articleRecord({ slug: 'noted' }));
    const journal = renderJournalFileFor(clientDir);
    await createRegenerator({ clientDir, render: fakeRenderer(stored) }).regenerate('/article/noted');
    expect(fs.existsSync(journal)).toBe(false);

    fs.rmSync(clientDir, { recursive: true });
    const warnings: string[] = [];
    await createRegenerator({ clientDir, render: fakeRenderer(stored), journal: { warn: (m) => warnings.push(m) } }).regenerate(
      '/article/noted',
    );
    const [line] = fs.readFileSync(journal, 'utf8').trim().split('\n');
    expect(JSON.parse(line!)).toMatchObject({ path: '/article/noted', i: articlePageInput(stored.get('noted')!) });
    expect(warnings).toEqual([]);
  });

  it('plans a reconcile with the files the data no longer has first, then every public path', async () => {
    const { store, stored, clientDir } = await storeWith(articleRecord({ slug: 'live' }));
    fs.mkdirSync(path.join(clientDir, 'article', 'gone'), { recursive: true });
    fs.writeFileSync(path.join(clientDir, 'article', 'gone', 'index.html'), 'old');
    const engine = createRegenerator({ clientDir, render: fakeRenderer(stored) });
    const { paths, marks } = await engine.planAll(store);
    // The marks count the stale file too: the front pages end one path later than planPublicPaths says.
    expect(marks[0]).toMatchObject({ label: 'the front pages', end: (await planPublicPaths(store)).marks[0]!.end + 1 });
    expect(paths[0]).toBe('/article/gone');
    expect(paths).toContain('/article/live');
    expect(paths).toContain('/rss.xml');
    expect(new Set(paths).size).toBe(paths.length);
  });

  it('plans an incremental run: nothing after a recorded run, a changed article, and the pages the worker already wrote', async () => {
    const { store, stored, clientDir } = await storeWith(articleRecord({ slug: 'one' }), articleRecord({ slug: 'two' }));
    const rebuild = createRegenerator({ clientDir, render: fakeRenderer(stored) });
    const first = await rebuild.planChanged(store, { build: 'b', storeId: store.id, pages: {} });
    expect(first.render).toEqual(expect.arrayContaining(['/article/one', '/article/two', '/section/world']));
    for (const publicPath of first.render) await rebuild.regenerate(publicPath);
    const pages = rebuild.stateOf(first.inputs);
    first.discardJournal();

    const second = await rebuild.planChanged(store, { build: 'b', storeId: store.id, pages });
    // Only the files rendered every time (feeds, robots, corrections) are left.
    expect(second.render.every((p) => second.inputs.get(p)?.i === ALWAYS)).toBe(true);
    expect(second.remove).toEqual([]);

    // An edit: the worker renders /article/one (noting it in its journal); /article/two is edited with nobody rendering it.
    for (const slug of ['one', 'two']) {
      const before = stored.get(slug)!;
      await store.articles.replace({ ...before, title: `${before.title} edited`, updatedAt: new Date().toISOString() });
      stored.set(slug, (await store.articles.getBySlug(slug))!);
    }
    await createRegenerator({ clientDir, render: fakeRenderer(stored), journal: { warn: () => {} } }).regenerate('/article/one');
    const third = await rebuild.planChanged(store, { build: 'b', storeId: store.id, pages });
    expect(third.adopt).toContain('/article/one');
    expect(third.render).toContain('/article/two');
    expect(third.render).not.toContain('/article/one');

    // An unpublished article's page goes.
    await store.articles.replace({ ...stored.get('two')!, status: 'draft' });
    const fourth = await rebuild.planChanged(store, { build: 'b', storeId: store.id, pages });
    expect(fourth.remove).toContain('/article/two');
  });

  it("re-indexes the search bundle of a changed closed month, and leaves the jobs it cannot run for the server's start", async () => {
    const { store, stored, clientDir } = await storeWith(
      articleRecord({ slug: 'january', publishedAt: '2025-01-15T10:00:00.000Z', updatedAt: '2025-01-15T10:00:00.000Z' }),
      articleRecord({ slug: 'february', publishedAt: '2025-02-15T10:00:00.000Z', updatedAt: '2025-02-15T10:00:00.000Z' }),
    );
    const engine = createRegenerator({ clientDir, render: fakeRenderer(stored) });
    for (const slug of stored.keys()) await engine.regenerate(`/article/${slug}`);
    const { results, left } = await engine.reindexChanged(store, new Set(['2025-01']), ['/pagefind/compact', '/pagefind/2025-02']);
    expect(results.map((r) => [r.period, r.pages]).sort()).toEqual([
      ['2025-01', 1],
      ['2025-02', 1],
    ]);
    expect(left).toEqual(['/pagefind/compact']);
    expect((await readPeriodsFile(clientDir)).sort()).toEqual(['2025-01', '2025-02']);
  });
});
