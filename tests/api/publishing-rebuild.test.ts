/**
 * The rebuild script and the render manifest on real data: `npm run rebuild` into a fresh OUT_DIR
 * produces the complete static site, regenerated pages are byte-identical to built ones for the
 * same data, a server on a foreign DATA_DIR reconciles the pages, and a rebuild under a running
 * server swaps files in without readers noticing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, makeOutDir, startServer, type TestServer } from '../helpers/server.ts';
import type { Article } from '../../src/schemas/article.ts';
import { adminClient, createArticle, readDataFile, waitFor } from './support.ts';
import { runRebuild } from '../helpers/rebuild.ts';
import { manifestFileFor, readRenderManifest } from '../../src/server/publishing/manifest.ts';

const fileIn = (clientDir: string, publicPath: string) =>
  path.join(clientDir, ...publicPath.split('/').filter(Boolean), ...(/\.(xml|txt)$/.test(publicPath) ? [] : ['index.html']));

async function waitForIdle(server: TestServer): Promise<void> {
  await waitFor('the regeneration queue to drain', async () => {
    if ((await readDataFile<{ jobs: unknown[] }>(server.dataDir, 'jobs')).jobs.length > 0) return false;
    const manifest = readRenderManifest(manifestFileFor(server.clientDir));
    if (!manifest) return false;
    return manifest.version === (await readDataFile<{ version: number }>(server.dataDir, 'articles')).version;
  });
}

describe('npm run rebuild', () => {
  const outDir = makeOutDir('test-rebuild-');
  const dataDir = makeDataDir('meridian-rebuild-');
  let articles: Article[] = [];
  let scheduled: Article;
  let rebuild: { code: number; output: string; ms: number };

  beforeAll(async () => {
    const server = await startServer({ dataDir });
    try {
      const admin = await adminClient(server);
      for (let i = 1; i <= 13; i++)
        await createArticle(admin, { title: `Launch window ${i}`, section: 'tech', status: 'published', dek: `Dek ${i}` });
      await createArticle(admin, { title: 'Front page story', section: 'home', status: 'published', tags: ['front'] });
      const pulled = await createArticle(admin, { title: 'Pulled story', section: 'tech', status: 'published' });
      expect((await admin.put(`/api/articles/${pulled.id}`, { status: 'archived' })).status).toBe(200);
      articles = (await (await admin.get('/api/articles?limit=100')).json()) as Article[];
      scheduled = await createArticle(admin, {
        title: 'Embargo lifts',
        section: 'opinion',
        status: 'scheduled',
        scheduledFor: new Date(Date.now() + 1500).toISOString(),
      });
    } finally {
      await server.stop();
    }
    // The rebuild script on that data, into a fresh OUT_DIR, once the scheduled article is due.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(scheduled.scheduledFor!) - Date.now() + 100)));
    rebuild = await runRebuild(outDir, dataDir);
    console.log(`[figure] npm run rebuild (${articles.length + 1} articles, fresh OUT_DIR): ${(rebuild.ms / 1000).toFixed(1)} s in all`);
    console.log(
      rebuild.output
        .split('\n')
        .filter((l) => /files prerendered|search index|total/.test(l))
        .join('\n'),
    );
  }, 180_000);

  afterAll(() => {
    fs.rmSync(outDir, { recursive: true, force: true });
  });

  it('exits 0, publishes the due article and prints progress and a summary', async () => {
    expect(rebuild.code, rebuild.output).toBe(0);
    expect(rebuild.output).toContain(`published 1 scheduled article(s): ${scheduled.slug}`);
    expect(rebuild.output).toMatch(/\[rebuild\] pages \d+\/\d+ \(\d+\.\d s\)/);
    expect(rebuild.output).toContain('files prerendered');
    expect((await readDataFile<{ articles: Article[] }>(dataDir, 'articles')).articles.find((a) => a.id === scheduled.id)?.status).toBe(
      'published',
    );
  });

  it('produces the complete static site: pages, feeds, sitemaps, search index, manifest', async () => {
    const client = path.join(outDir, 'client');
    for (const a of articles.filter((x) => x.status === 'published'))
      expect(fs.existsSync(fileIn(client, `/article/${a.slug}`)), a.slug).toBe(true);
    expect(fs.existsSync(fileIn(client, `/article/${scheduled.slug}`))).toBe(true);
    expect(fs.existsSync(fileIn(client, '/article/pulled-story'))).toBe(false);
    for (const p of [
      '/section/tech',
      '/section/tech/page/2',
      '/section/home',
      '/section/world',
      '/section/opinion',
      '/rss.xml',
      '/section/tech/rss.xml',
      '/sitemap.xml',
      '/news-sitemap.xml',
      '/robots.txt',
    ]) {
      expect(fs.existsSync(fileIn(client, p)), p).toBe(true);
    }
    expect(fs.existsSync(fileIn(client, '/section/tech/page/3'))).toBe(false);
    expect(fs.existsSync(path.join(client, '404.html'))).toBe(true);
    const { periods } = JSON.parse(fs.readFileSync(path.join(client, 'pagefind', 'periods.json'), 'utf8')) as { periods: string[] };
    expect(periods.length).toBeGreaterThan(0);
    for (const period of periods) {
      expect(fs.existsSync(path.join(client, 'pagefind', period, 'pagefind.js')), period).toBe(true);
      expect(fs.existsSync(path.join(client, 'pagefind', period, 'pagefind-entry.json')), period).toBe(true);
    }
    expect(fs.existsSync(path.join(client, 'pagefind', 'pagefind.js'))).toBe(false);
    expect(fs.existsSync(path.join(outDir, 'server', 'entry.mjs'))).toBe(true);
    const sitemap = fs
      .readdirSync(path.join(client, 'sitemaps'))
      .map((name) => fs.readFileSync(path.join(client, 'sitemaps', name), 'utf8'))
      .join('\n');
    expect(sitemap).toContain(`/article/${scheduled.slug}`);
    expect(sitemap).not.toContain('/article/pulled-story');
    expect(fs.readFileSync(fileIn(client, '/sitemap.xml'), 'utf8')).toContain('<sitemapindex');
    expect(fs.readFileSync(fileIn(client, '/robots.txt'), 'utf8')).toMatch(/Sitemap: .*\/sitemap\.xml/);
    expect(fs.readFileSync(fileIn(client, '/section/opinion/rss.xml'), 'utf8')).toContain(`/article/${scheduled.slug}`);
    const manifest = readRenderManifest(manifestFileFor(path.join(outDir, 'client')))!;
    expect(manifest.version).toBe((await readDataFile<{ version: number }>(dataDir, 'articles')).version);
    expect(manifest.storeId).toBe((await readDataFile<{ storeId: string }>(dataDir, 'meta')).storeId);
    expect(fs.readdirSync(path.dirname(outDir)).filter((n) => n.startsWith(`${path.basename(outDir)}.staging`))).toEqual([]);
  });

  it('pages regenerated by a server are byte-identical to what a rebuild under it writes for the same data', async () => {
    // The server serves the built folder itself, as in production; its manifest matches the data.
    const server = await startServer({ dataDir, env: { OUT_DIR: outDir, SERVE_DIR: path.join(outDir, 'client') } });
    try {
      const admin = await adminClient(server);
      const fresh = await createArticle(admin, { title: 'Orbit reached', section: 'tech', status: 'published', tags: ['space'] });
      const edited = articles.find((a) => a.status === 'published' && a.section === 'tech')!;
      expect((await admin.put(`/api/articles/${edited.id}`, { title: `${edited.title}, revised`, dek: 'New dek' })).status).toBe(200);
      await waitForIdle(server);
      expect(server.output()).not.toContain('reconciling');
      const paths = [
        '/article/orbit-reached',
        `/article/${edited.slug}`,
        '/section/tech',
        '/section/tech/page/2',
        '/rss.xml',
        '/section/tech/rss.xml',
        '/sitemap.xml',
        '/news-sitemap.xml',
      ];
      for (const p of paths.slice(0, 4)) expect(server.output(), p).toContain(`[publish] ${p} written`);
      const regenerated = new Map(paths.map((p) => [p, fs.readFileSync(fileIn(server.clientDir, p), 'utf8')]));
      expect(regenerated.get('/section/tech')).toContain(`/article/${fresh.slug}`);

      // Readers keep getting complete pages while the rebuild swaps the folder in under the server.
      let reads = 0;
      const failures: string[] = [];
      let done = false;
      const reader = (async () => {
        while (!done) {
          for (const p of ['/article/orbit-reached', '/section/tech', '/sitemap.xml']) {
            const response = await fetch(new URL(p, server.url));
            const text = await response.text();
            reads++;
            if (response.status !== 200 || (p !== '/sitemap.xml' && !text.includes('</html>'))) failures.push(`${p}: ${response.status}`);
          }
        }
      })();
      // A clean build (what the server's pages must equal), then an incremental one, both under the server.
      const second = await runRebuild(outDir, dataDir, ['--full']);
      const third = await runRebuild(outDir, dataDir);
      done = true;
      await reader;
      console.log(
        `[figure] full and incremental rebuild under a running server: ${(second.ms / 1000).toFixed(1)} s and ${(third.ms / 1000).toFixed(1)} s; ${reads} reads during them, ${failures.length} failed`,
      );
      expect(second.code, second.output).toBe(0);
      expect(second.output).toMatch(/a server \(pid \d+\) holds .*it publishes due articles itself/);
      expect(third.code, third.output).toBe(0);
      expect(third.output).toMatch(/\[rebuild\] done: incremental: \d+ of \d+ pages rendered \(0 written\), 0 removed/);
      expect(failures).toEqual([]);
      for (const [p, html] of regenerated) expect(fs.readFileSync(fileIn(path.join(outDir, 'client'), p), 'utf8'), p).toBe(html);
    } finally {
      await server.stop();
    }
  }, 180_000);

  it('a server on the built site renders every page again byte for byte when the manifest is lost', async () => {
    const site = path.join(makeDataDir('meridian-rebuild-site-'), 'client');
    fs.cpSync(path.join(outDir, 'client'), site, { recursive: true });
    // No manifest beside the copy: the server must check every page against the data.
    const server = await startServer({ dataDir, env: { OUT_DIR: outDir, SERVE_DIR: site } });
    try {
      const line = await waitFor(
        'the reconcile summary',
        async () => /reconciled (\d+) pages .*: (\d+) written, (\d+) deleted, (\d+) unchanged/.exec(server.output()) ?? undefined,
      );
      console.log(`[figure] ${line[0]}`);
      expect(Number(line[2]), server.output()).toBe(0);
      expect(Number(line[3]), server.output()).toBe(0);
      expect(Number(line[4]), server.output()).toBe(Number(line[1]));
    } finally {
      await server.stop();
    }
  }, 60_000);

  it('on a foreign DATA_DIR a server removes the pages of the other data', async () => {
    const site = path.join(makeDataDir('meridian-rebuild-site-'), 'client');
    fs.cpSync(path.join(outDir, 'client'), site, { recursive: true });
    fs.copyFileSync(path.join(outDir, 'render-state.json'), path.join(site, '..', 'render-state.json'));
    const foreign = await startServer({ env: { OUT_DIR: outDir, SERVE_DIR: site } });
    try {
      await waitFor('the reconcile summary', async () => foreign.output().includes('reconciled'));
      expect(foreign.output()).toContain('the pages were rendered from another data folder');
      const slug = articles.find((a) => a.status === 'published')!.slug;
      expect((await fetch(new URL(`/article/${slug}`, foreign.url))).status).toBe(404);
      expect(fs.existsSync(fileIn(site, `/article/${slug}`))).toBe(false);
      expect(fs.existsSync(fileIn(site, '/section/tech/page/2'))).toBe(false);
      const section = await (await fetch(new URL('/section/tech', foreign.url))).text();
      expect(section, foreign.output()).toContain('No articles available in this section yet.');
    } finally {
      await foreign.stop();
    }
  }, 60_000);
});
