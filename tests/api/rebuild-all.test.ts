/**
 * `npm run rebuild -- --all` (issue 36) on real data and a real build: every page rendered again by
 * the new build's render twins on several threads writes the same bytes as a clean `--full` build;
 * readers of a running server get a whole page of the old build or of the new one throughout, with
 * every asset it names; and the render state it records leaves the next incremental rebuild almost
 * nothing to render.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, makeOutDir, startServer } from '../helpers/server.ts';
import { storeOptionsFor } from '../helpers/postgres.ts';
import { differences, digest, renderedCount, runRebuild, tree } from '../helpers/rebuild.ts';
import { waitFor } from './support.ts';
import { openStore } from '../../src/store/index.ts';
import { articleRecord } from '../unit/support.ts';
import { parseRerenderSummary } from '../../bench/scale/server.ts';

/** The first build's pages carry another site name (a site setting the pages print), so a reader can tell the two builds apart. */
const OLD_NAME = 'Meridian Before The Deploy';

/** The file serving an HTML page. */
const fileIn = (clientDir: string, publicPath: string) => path.join(clientDir, ...publicPath.split('/').filter(Boolean), 'index.html');

describe('npm run rebuild -- --all', () => {
  const dataDir = makeDataDir('meridian-rebuild-all-');
  const outAll = makeOutDir('all-');
  const outFull = makeOutDir('all-full-');
  const slugs: string[] = [];

  beforeAll(async () => {
    const store = await openStore(dataDir, 'write', await storeOptionsFor(dataDir));
    let clock = Date.parse('2026-02-20T08:00:00.000Z');
    // Two months of articles over two sections, with tags (archives) and authors: about 100 files.
    for (let i = 0; i < 36; i++) {
      clock += 20 * 3_600_000;
      const at = new Date(clock).toISOString();
      const slug = `story-${i}`;
      await store.articles.insert(
        articleRecord({
          id: slug,
          slug,
          title: `Story ${i}`,
          section: i % 3 ? 'business' : 'culture',
          tags: [`topic ${i % 4}`],
          createdAt: at,
          updatedAt: at,
          publishedAt: at,
        }),
      );
      slugs.push(slug);
    }
    await store.close();
    // One after the other: a rebuild holds the data folder while it reads it, and a second one at the
    // same moment is refused ("Another process is using the data folder").
    const old = await runRebuild(outAll, dataDir, ['--full'], { SITE_NAME: OLD_NAME });
    expect(old.code, old.output).toBe(0);
    const full = await runRebuild(outFull, dataDir, ['--full']);
    expect(full.code, full.output).toBe(0);
  }, 240_000);

  afterAll(() => {
    for (const dir of [dataDir, `${dataDir}-site`, outAll, outFull]) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('under a running server readers always get a whole page of one build or the other; the result equals --full byte for byte', async () => {
    const clientDir = path.join(outAll, 'client');
    const watched = ['/section/business', '/section/culture', ...slugs.slice(0, 6).map((slug) => `/article/${slug}`), '/tag/topic-1'];
    const beforeHtml = watched.map((p) => fs.readFileSync(fileIn(clientDir, p), 'utf8'));
    for (const html of beforeHtml) expect(html).toContain(OLD_NAME);
    const before = new Map(watched.map((p, i) => [p, digest(beforeHtml[i]!)]));
    // The server serves the built folder itself, as in production.
    const server = await startServer({ dataDir, env: { OUT_DIR: outAll, SERVE_DIR: clientDir } });
    // Each read by its digest: thousands of reads keep no copy of each body.
    const reads: Array<{ path: string; sha: string }> = [];
    const failures: string[] = [];
    const assetsOk = new Set<string>();
    let rebuild: Awaited<ReturnType<typeof runRebuild>>;
    try {
      let done = false;
      const reader = (async () => {
        while (!done) {
          for (const p of watched) {
            const response = await fetch(new URL(p, server.url));
            const body = await response.text();
            reads.push({ path: p, sha: digest(body) });
            if (response.status !== 200 || !body.trimEnd().endsWith('</html>'))
              failures.push(`${p}: ${response.status}, ${body.length} chars`);
            // Every stylesheet and script the page names answers (the old build's stay beside the new ones).
            for (const [, asset] of body.matchAll(/(?:href|src)="(\/_astro\/[^"]+)"/g)) {
              if (assetsOk.has(asset!)) continue;
              const status = (await fetch(new URL(asset!, server.url))).status;
              if (status === 200) assetsOk.add(asset!);
              else failures.push(`${p} names ${asset}: ${status}`);
            }
          }
        }
      })();
      rebuild = await runRebuild(outAll, dataDir, ['--all'], { RENDER_THREADS: '2' });
      done = true;
      await reader;
      expect(server.output()).not.toContain('reconciling');
    } finally {
      await server.stop();
    }
    expect(rebuild.code, rebuild.output).toBe(0);
    expect(rebuild.output).toMatch(/pages rendered +\d+ on 2 thread\(s\)/);
    expect(rebuild.output).toMatch(/\[rebuild\] render: \d+\/\d+ pages \(\d+%, about \d+ s left\)/);
    expect(rebuild.output).toMatch(/newest first +the front pages: \d+ pages in [\d.]+ s, the last 24 hours: \d+ pages in/);
    // The CPU budget (issue 47): every page was written (a new site name), so each of these parts took time, and the parts add up.
    const cpu = parseRerenderSummary(rebuild.output)?.cpuPerPage;
    expect(cpu, rebuild.output).toBeDefined();
    const { total, bundleLoadsS, ...parts } = cpu!;
    for (const part of ['render', 'brotli', 'gzip', 'dataLoadAndWrites', 'bundleLoad'] as const)
      expect(parts[part], part).toBeGreaterThan(0);
    expect(bundleLoadsS).toBeGreaterThan(0);
    const sum = Object.values(parts).reduce((a, b) => a + b, 0);
    expect(Math.abs(sum - total)).toBeLessThan(0.05 + total * 0.01);
    const rendered = Number(/pages rendered +(\d+) on/.exec(rebuild.output)?.[1]);
    console.log(
      `[figure] --all under a running server: ${rendered} pages in ${(rebuild.ms / 1000).toFixed(1)} s (astro build included); ${reads.length} reads during it, ${failures.length} failed`,
    );
    expect(failures).toEqual([]);
    expect(assetsOk.size).toBeGreaterThan(0);

    // A whole page of one build or the other: each body read is the page before or after, byte for byte.
    const afterHtml = watched.map((p) => fs.readFileSync(fileIn(clientDir, p), 'utf8'));
    for (const html of afterHtml) expect(html).not.toContain(OLD_NAME);
    const after = new Map(watched.map((p, i) => [p, digest(afterHtml[i]!)]));
    // Newest first: a section's front page, then the newest article, the oldest last.
    const writtenAt = (p: string) => fs.statSync(fileIn(clientDir, p)).mtimeMs;
    expect(writtenAt('/section/business')).toBeLessThan(writtenAt(`/article/${slugs.at(-1)}`));
    expect(writtenAt(`/article/${slugs.at(-1)}`)).toBeLessThan(writtenAt(`/article/${slugs[0]}`));
    const mixed = reads.filter(({ path: p, sha }) => sha !== before.get(p) && sha !== after.get(p)).map(({ path: p }) => p);
    expect(mixed).toEqual([]);
    const fresh = reads.filter(({ path: p, sha }) => sha === after.get(p)).length;
    console.log(`[figure] reads during --all: ${reads.length - fresh} of the old build, ${fresh} of the new`);

    // The same bytes as a clean build of the same data and code. Nothing is left out of the comparison:
    // the render twins draw what the prerendered routes do, the hashed asset names are the same code's,
    // and the search bundles are indexed afresh from the same pages.
    expect(differences(tree(clientDir), tree(path.join(outFull, 'client')), ['--all', '--full'])).toEqual([]);
  }, 240_000);

  it('records the render state, so the next incremental rebuild renders only the always-rendered files', async () => {
    const next = await runRebuild(outAll, dataDir);
    expect(next.code, next.output).toBe(0);
    expect(next.output).toMatch(/\[rebuild\] done: incremental: \d+ of \d+ pages rendered \(0 written\), 0 removed, 0 search bundle\(s\)/);
    expect(renderedCount(next.output)).toBeLessThanOrEqual(20);
    await waitFor('nothing left of the staging folder', async () =>
      fs.readdirSync(path.dirname(outAll)).every((name) => !name.startsWith(`${path.basename(outAll)}.staging`)),
    );
  }, 120_000);
});
