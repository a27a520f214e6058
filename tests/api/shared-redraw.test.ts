/**
 * Servers on one PostgreSQL database starting on pages another build drew (a deploy, issue 47 part 4):
 * they share the redraw, each batch of the newest-first order drawn by one of them and copied by the
 * others, and a server started after it ends copies the pages instead of drawing them again. Real
 * servers, a real database, the suite's build; the old build's pages are the served files with their
 * footer changed, as an older template would have drawn them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, siteCopyFor, startServer, type TestServer } from '../helpers/server.ts';
import { databaseFor } from '../helpers/postgres.ts';
import { openStore } from '../../src/store/index.ts';
import { createPool } from '../../src/store/pg/db.ts';
import { readRenderStateHeader, renderStateFileFor, updateRenderStateHeader } from '../../src/server/publishing/render-state.ts';
import { splitIntoBatches } from '../../src/server/publishing/shared-sweep.ts';
import { isRegenerablePath } from '../../src/server/publishing/paths.ts';
import { articleRecord } from '../unit/support.ts';
import { waitFor, waitForIdleQueue } from './support.ts';

/** Enough pages for several batches of 50, so the servers that start together each draw some. */
const ARTICLES = 400;
const FOOTER = 'Your Gateway to Global Perspectives.';
const OLD_FOOTER = 'Drawn by the build before the deploy.';
const OLD_BUILD = 'the-build-before';

/** Every HTML file of a served folder (search bundles aside: each server indexes its own), path to text. */
function htmlFiles(clientDir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of fs.readdirSync(clientDir, { recursive: true, withFileTypes: true })) {
    const file = path.join(entry.parentPath, entry.name);
    if (entry.isFile() && entry.name.endsWith('.html') && !file.includes(`${path.sep}pagefind`))
      files.set(path.relative(clientDir, file), fs.readFileSync(file, 'utf8'));
  }
  return files;
}

/** The public path a served HTML file answers (`article/x/index.html`: `/article/x`). */
const publicPathOf = (file: string) => `/${file.split(path.sep).slice(0, -1).join('/')}`;

/**
 * A served folder as the old build left it: every page the worker draws with that build's footer (the
 * fixed pages, 404 and the like, come with the new build itself), the render state naming that build.
 */
function asDrawnByOldBuild(clientDir: string): void {
  for (const [file, html] of htmlFiles(clientDir))
    if (isRegenerablePath(publicPathOf(file))) fs.writeFileSync(path.join(clientDir, file), html.replaceAll(FOOTER, OLD_FOOTER));
  updateRenderStateHeader(renderStateFileFor(clientDir), (header) => ({ ...header, drawnWith: OLD_BUILD }));
}

/** The servers' summary line of a shared redraw: pages drawn here, of all. */
function drawnHere(server: TestServer): { here: number; of: number } {
  const match = /\[publish\] reconciled \d+ pages .*; (\d+) of (\d+) drawn here, the rest by the other servers/.exec(server.output());
  if (!match) throw new Error(`no shared redraw in the log of ${server.url}`);
  return { here: Number(match[1]), of: Number(match[2]) };
}

describe('a redraw for a new build shared by the servers on one database', () => {
  let databaseUrl: string;
  const dataDirs = { a: makeDataDir('meridian-redraw-a-'), b: makeDataDir('meridian-redraw-b-'), c: makeDataDir('meridian-redraw-c-') };
  const servers: TestServer[] = [];
  const start = async (name: keyof typeof dataDirs) => {
    // One render thread each: the redraw lasts long enough for both to take part on a small archive.
    const server = await startServer({ dataDir: dataDirs[name], env: { DATABASE_URL: databaseUrl, RENDER_THREADS: '1' } });
    servers.push(server);
    return server;
  };
  const siteOf = (name: keyof typeof dataDirs) => siteCopyFor(dataDirs[name]);

  beforeAll(async () => {
    databaseUrl = await databaseFor(makeDataDir('meridian-redraw-db-'));
    const store = await openStore(dataDirs.a, 'write', { databaseUrl });
    for (let i = 0; i < ARTICLES; i++) {
      const at = new Date(Date.parse('2026-03-02T08:00:00.000Z') + i * 3_600_000).toISOString();
      await store.articles.insert(
        articleRecord({ id: `redraw-${i}`, slug: `redraw-${i}`, title: `Redraw ${i}`, createdAt: at, updatedAt: at, publishedAt: at }),
      );
    }
    await store.close();
    // A draws every page of the data once, alone; B and C start from a copy of its folder.
    const a = await start('a');
    await waitForIdleQueue(a.url, 120_000);
    await a.stop();
    servers.length = 0;
    for (const name of ['b', 'c'] as const) {
      fs.cpSync(path.dirname(siteOf('a')), path.dirname(siteOf(name)), { recursive: true });
    }
    for (const name of ['a', 'b', 'c'] as const) asDrawnByOldBuild(siteOf(name));
    // The pages A stored are the new build's bytes: gone, as if the old build had stored its own.
    const db = createPool(databaseUrl, false);
    await db.query('DELETE FROM rendered_pages');
    await db.end();
  }, 180_000);

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    for (const dir of Object.values(dataDirs)) {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(`${dir}-site`, { recursive: true, force: true });
    }
  });

  it('cuts the newest-first order into batches of at least 50, at most 64 of them, the front pages in the first', () => {
    const paths = Array.from({ length: 10_000 }, (_, i) => `/p/${i}`);
    const batches = splitIntoBatches(paths);
    expect(batches).toHaveLength(64);
    expect(batches.flat()).toEqual(paths);
    expect(splitIntoBatches(paths.slice(0, 120)).map((batch) => batch.length)).toEqual([50, 50, 20]);
  });

  it('two servers starting together draw each batch once between them, and both serve every page of the new build', async () => {
    const [a, b] = await Promise.all([start('a'), start('b')]);
    const ended = (server: TestServer) => server.output().includes('every page is drawn by this build');
    await waitFor('both servers to end the shared redraw', async () => ended(a) && ended(b), 120_000);
    // One of them wrote the batches.
    const led = [a, b].filter((server) => server.output().includes('with the other servers: ')).length;
    expect(led).toBe(1);
    const [byA, byB] = [drawnHere(a), drawnHere(b)];
    // Each drew its batches with the new footer and copied the other's.
    for (const server of [a, b]) expect(server.output()).toMatch(/reconciled \d+ pages .*: [1-9]\d* written/);
    console.log(`[figure] ${byA.of} pages drawn again: ${byA.here} by A, ${byB.here} by B`);
    expect(byA.of).toBe(byB.of);
    expect(byA.here + byB.here).toBe(byA.of);
    expect(byA.here).toBeGreaterThan(0);
    expect(byB.here).toBeGreaterThan(0);
    await Promise.all([waitForIdleQueue(a.url, 60_000), waitForIdleQueue(b.url, 60_000)]);

    const pagesA = htmlFiles(a.clientDir);
    const pagesB = htmlFiles(b.clientDir);
    expect(pagesA.size).toBeGreaterThan(ARTICLES);
    expect([...pagesA.keys()].sort()).toEqual([...pagesB.keys()].sort());
    for (const [file, html] of pagesA) {
      expect(html, file).not.toContain(OLD_FOOTER);
      expect(pagesB.get(file), file).toBe(html);
    }
    const served = await (await fetch(new URL('/article/redraw-7/', b.url))).text();
    expect(served).toContain(FOOTER);
    for (const server of [a, b]) expect(readRenderStateHeader(renderStateFileFor(server.clientDir)).drawnWith).not.toBe(OLD_BUILD);
  }, 180_000);

  it('a server started after the redraw ended copies the pages instead of drawing them again', async () => {
    const c = await start('c');
    await waitFor('C to take the pages as drawn', async () => c.output().includes('every page is drawn by this build'), 60_000);
    await waitForIdleQueue(c.url, 60_000);
    const output = c.output();
    expect(output).toContain('the servers sharing the database drew every page for this build: copied at start');
    expect(output).toContain('every page is drawn by this build');
    expect(output).not.toMatch(/drawn here|batch \d+ of/);
    const pagesA = htmlFiles(servers[0]!.clientDir);
    for (const [file, html] of htmlFiles(c.clientDir)) expect(html, file).toBe(pagesA.get(file));
  }, 120_000);
});
