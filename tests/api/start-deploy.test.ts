/**
 * `npm start` after a deploy (issue 36): in a copy of the project whose footer is edited as a deploy
 * would, on real data and real builds, the start builds only the bundle and the fixed pages, serves the
 * old pages at once, and its worker draws every page again with the new build while it serves; a page
 * of an article saved meanwhile goes first, and the search index is kept (no page's text changed). A
 * restart with nothing changed builds and draws nothing, and `npm run rebuild` afterwards keeps the
 * swapped-in bundle and the redrawn pages.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, makeDataDir, messagesOf } from '../helpers/server.ts';
import { storeEnvFor, storeOptionsFor } from '../helpers/postgres.ts';
import { copyProject, editFile } from '../helpers/project-copy.ts';
import { recordServerOutput } from '../helpers/server-logs.ts';
import { runRebuild } from '../helpers/rebuild.ts';
import { SERVER_NODE_FLAGS, waitForListening } from '../../scripts/server-process.ts';
import { openStore } from '../../src/store/index.ts';
import { readRenderStateHeader, renderStateFileFor } from '../../src/server/publishing/render-state.ts';
import { articleRecord } from '../unit/support.ts';
import { createArticle, TestClient, waitFor, waitForIdleQueue } from './support.ts';

/** Enough pages that drawing them all again on one render thread takes a few seconds, to write and read meanwhile. */
const ARTICLES = 300;
const OLD_FOOTER = 'Your Gateway to Global Perspectives.';
const NEW_FOOTER = 'Your gateway, deployed while serving.';

type Started = { url: string; output: () => string; stop: () => Promise<void> };

describe('npm start after a deploy', () => {
  const copy = copyProject('meridian-start-');
  const dataDir = makeDataDir('meridian-start-data-');
  const outDir = path.join(copy, '.out', 'site');
  const clientDir = path.join(outDir, 'client');
  const slugs = Array.from({ length: ARTICLES }, (_, i) => `start-${i}`);
  let server: Started | undefined;

  /** scripts/start.ts of the copy, once it listens (after the build it decides on). */
  const start = async (): Promise<Started> => {
    const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, path.join(copy, 'scripts/start.ts')], {
      cwd: copy,
      env: {
        ...process.env,
        NODE_ENV: 'production',
        PORT: '0',
        HOST: '127.0.0.1',
        OUT_DIR: outDir,
        DATA_DIR: dataDir,
        SEED: 'none',
        SITE_URL: 'http://localhost:4321',
        ADMIN_USERNAME: ADMIN.username,
        ADMIN_PASSWORD: ADMIN.password,
        BRIEFING_TIME: 'off',
        // One thread: the redraw lasts long enough to be watched on this small archive.
        RENDER_THREADS: '1',
        ...(await storeEnvFor(dataDir)),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    recordServerOutput(child, `start-${path.basename(dataDir)}`);
    const { url, output, exited } = await waitForListening(child, 240_000);
    return {
      url,
      output: () => messagesOf(output()),
      stop: async () => {
        if (child.exitCode === null) child.kill('SIGTERM');
        await exited;
      },
    };
  };
  const rebuild = () => runRebuild(outDir, dataDir, [], { SITE_URL: 'http://localhost:4321' }, copy);
  const mtimes = () => slugs.map((slug) => fs.statSync(path.join(clientDir, 'article', slug, 'index.html')).mtimeMs);
  const page = (slug: string) => fs.readFileSync(path.join(clientDir, 'article', slug, 'index.html'), 'utf8');
  const fetchText = async (pathname: string) => {
    const response = await fetch(new URL(pathname, server!.url));
    return { status: response.status, html: await response.text() };
  };

  beforeAll(async () => {
    const store = await openStore(dataDir, 'write', await storeOptionsFor(dataDir));
    for (const [i, slug] of slugs.entries()) {
      const at = new Date(Date.parse('2026-03-02T08:00:00.000Z') + i * 3_600_000).toISOString();
      await store.articles.insert(
        articleRecord({ id: slug, slug, title: `Start story ${i}`, createdAt: at, updatedAt: at, publishedAt: at }),
      );
    }
    await store.close();
    // The first build: `npm run rebuild` (a full one, which records what each page was drawn from).
    const built = await rebuild();
    expect(built.output).toContain('full build: there is no build yet');
    expect(built.code).toBe(0);
    server = await start();
    expect(server.output()).not.toContain('Building');
    await waitForIdleQueue(server.url, 120_000);
    await server.stop();
    expect(page('start-0')).toContain(OLD_FOOTER);
  }, 360_000);

  afterAll(async () => {
    await server?.stop();
    for (const dir of [copy, dataDir]) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves the old pages at once and draws every page again with the new build, a new save first', async () => {
    editFile(copy, 'src/components/SiteFooter.astro', (text) => text.replace(OLD_FOOTER, NEW_FOOTER));
    server = await start();
    const started = server.output();
    expect(started).toContain('Building the new bundle (sources changed)');
    expect(started).not.toContain('Building the site');
    // Only the fixed pages were prerendered (about 50), not the archive.
    const prerendered = Number(/\[rebuild\] pages (\d+)\/\d+/.exec(started)?.[1]);
    expect(prerendered).toBeLessThan(ARTICLES / 2);

    // Readers are answered from the moment it listens: the article pages are still the old build's...
    const articles = await Promise.all(slugs.map((slug) => fetchText(`/article/${slug}/`)));
    expect(articles.map((a) => a.status)).toEqual(slugs.map(() => 200));
    expect(articles.filter((a) => a.html.includes(OLD_FOOTER)).length).toBeGreaterThan(0);
    // ...and the fixed pages the bundle's build made are the new one's.
    expect((await fetchText('/about/')).html).toContain(NEW_FOOTER);

    // An article saved during the redraw: its page job runs before the reconcile's next step.
    const admin = new TestClient(server.url);
    await admin.login();
    const filed = await createArticle(admin, { title: 'Filed during the redraw', section: 'world', status: 'published' });
    await waitFor(`/article/${filed.slug}/ with the new footer`, async () => {
      const { status, html } = await fetchText(`/article/${filed.slug}/`);
      return status === 200 && html.includes(NEW_FOOTER);
    });
    await waitFor('the end of the redraw', async () => server!.output().includes('every page is drawn by this build'), 180_000);
    await waitForIdleQueue(server.url, 120_000);

    const log = server.output();
    expect(log).toMatch(/reconciling \d+ pages: the pages were drawn by another build/);
    // The new article's page was written while the reconcile still had pages left.
    const written = log.indexOf(`[publish] /article/${filed.slug} written`);
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(log.indexOf('[publish] reconciled '));
    expect(log).toMatch(/\[publish\] reconciling: \d+\/\d+ pages \(\d+%\), about \d+ s left/);
    // Newest first: the front pages are on the new build before the archive behind them.
    expect(log.indexOf('[publish] reconciling: the front pages checked')).toBeGreaterThan(-1);
    expect(log.indexOf('[publish] reconciling: the front pages checked')).toBeLessThan(log.indexOf('[publish] reconciled '));
    // A new footer changes no text search reads: no bundle is indexed again for the redraw.
    expect(log).toContain('search index kept: only the bundles of pages whose text changed are indexed again');
    expect(log).not.toContain('/pagefind/all');
    for (const slug of [...slugs, filed.slug]) expect(page(slug), slug).toContain(NEW_FOOTER);
    expect(fs.readFileSync(path.join(clientDir, 'section', 'world', 'index.html'), 'utf8')).toContain(NEW_FOOTER);
    // The render state names the build the pages are drawn with now.
    const build = JSON.parse(fs.readFileSync(path.join(outDir, '.build-info.json'), 'utf8')) as { render?: string };
    expect(build.render).toBeTruthy();
    expect(readRenderStateHeader(renderStateFileFor(clientDir)).drawnWith).toBe(build.render);
  }, 360_000);

  it('a restart with nothing changed builds nothing and draws no page again', async () => {
    await server!.stop();
    const before = mtimes();
    server = await start();
    // The start-up check ends by queueing the search compaction when no reconcile runs.
    await waitFor('the start-up compaction', async () => server!.output().includes('[publish] /pagefind/compact'));
    await waitForIdleQueue(server.url);
    const log = server.output();
    expect(log).not.toContain('Building');
    expect(log).not.toContain('reconciling');
    expect(mtimes()).toEqual(before);
  }, 240_000);

  it('npm run rebuild after the redraw keeps the bundle the start swapped in and draws no page again', async () => {
    await server!.stop();
    const before = mtimes();
    const { code, output } = await rebuild();
    expect(output).toContain('new bundle: already in place');
    expect(output).not.toContain('every page rendered again');
    expect(code).toBe(0);
    // Pages the server's journal did not name are checked, and each is found as drawn: none written.
    expect(output).toMatch(/incremental: \d+ of \d+ pages rendered \(0 written\)/);
    expect(mtimes()).toEqual(before);
  }, 240_000);
});
