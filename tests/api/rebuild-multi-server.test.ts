/**
 * `npm run rebuild` on a database several servers share: two real servers on one real PostgreSQL
 * database, each serving its own copy of the build. Articles are changed straight in the database,
 * so no server's worker hears of it (no hook runs); the incremental rebuild renders the pages, stores
 * them and their removals in the database and announces them, and both servers copy them into their
 * folders without rendering them. A full build on that database says it does not reach the servers.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, makeOutDir, ROOT, startServer, type TestServer } from '../helpers/server.ts';
import { databaseFor } from '../helpers/postgres.ts';
import { openStore } from '../../src/store/index.ts';
import type { ArticleRecord } from '../../src/schemas/article.ts';
import { articleRecord } from '../unit/support.ts';
import { waitFor } from './support.ts';

function runRebuild(
  outDir: string,
  dataDir: string,
  env: Record<string, string>,
  args: string[] = [],
): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'scripts/rebuild.ts'), ...args], {
      cwd: ROOT,
      env: { ...process.env, OUT_DIR: outDir, DATA_DIR: dataDir, SEED: 'none', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => resolve({ code: code ?? 1, output }));
  });
}

const fetchPage = async (server: TestServer, publicPath: string) => {
  const response = await fetch(new URL(publicPath, server.url));
  return { status: response.status, body: await response.text() };
};

describe('npm run rebuild with two servers on one PostgreSQL database', () => {
  const rebuildData = makeDataDir('meridian-rebuild-multi-');
  const outDir = makeOutDir('rebuild-multi-');
  const made: ArticleRecord[] = [];
  const dirs = [rebuildData, outDir];
  const dataDir = (prefix: string) => {
    const dir = makeDataDir(prefix);
    dirs.push(dir, `${dir}-site`);
    return dir;
  };
  let env: Record<string, string>;
  let a: TestServer;
  let b: TestServer;

  /** A server on its own DATA_DIR and its own copy of the rebuild's pages (and render manifest), as docs/postgresql.md deploys them. */
  const start = (name: string) => {
    const serverData = dataDir(`meridian-rebuild-multi-${name}-`);
    const site = `${serverData}-site`;
    fs.cpSync(path.join(outDir, 'client'), path.join(site, 'client'), { recursive: true });
    fs.copyFileSync(path.join(outDir, 'render-state.json'), path.join(site, 'render-state.json'));
    // A long settle keeps the servers' workers off the jobs the rebuild queues, so what the servers
    // serve below can only have come through the database (with the default they may take some).
    return startServer({
      dataDir: serverData,
      env: { ...env, OUT_DIR: outDir, SERVE_DIR: path.join(site, 'client'), REGENERATION_SETTLE_MS: '60000' },
    });
  };

  beforeAll(async () => {
    env = { DATABASE_URL: await databaseFor(rebuildData) };
    const store = await openStore(dataDir('meridian-rebuild-multi-seed-'), 'write', { databaseUrl: env.DATABASE_URL });
    let clock = Date.parse('2026-03-02T08:00:00.000Z');
    for (let i = 0; i < 6; i++) {
      const at = new Date((clock += 3_600_000)).toISOString();
      const article = articleRecord({
        id: `harbour-${i}`,
        slug: `harbour-${i}`,
        title: `Harbour story ${i}`,
        createdAt: at,
        updatedAt: at,
        publishedAt: at,
      });
      await store.articles.insert(article);
      made.push(article);
    }
    await store.close();
    const first = await runRebuild(outDir, rebuildData, env);
    expect(first.code, first.output).toBe(0);
    expect(first.output).toContain('full build: there is no build yet');
    // No server gets a first build's pages through the database: it says so.
    expect(first.output).toMatch(/other servers\s+NOT updated: several servers share this database/);
    // Two servers starting side by side on one database, as after a reboot: neither waits for the other.
    const [startedA, startedB] = await Promise.allSettled([start('a'), start('b')]);
    // Kept even when the other failed to start, so afterAll stops it.
    if (startedA.status === 'fulfilled') a = startedA.value;
    if (startedB.status === 'fulfilled') b = startedB.value;
    for (const started of [startedA, startedB]) if (started.status === 'rejected') throw started.reason;
  }, 240_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("hands the pages of articles changed behind the servers' backs to both servers, and their removals", async () => {
    const edited = made[2]!;
    const removed = made[4]!;
    const store = await openStore(dataDir('meridian-rebuild-multi-edit-'), 'write', { databaseUrl: env.DATABASE_URL });
    await store.articles.replace({ ...edited, title: 'Harbour bridge reopens after repairs', updatedAt: new Date().toISOString() });
    await store.articles.delete(removed.id);
    await store.close();
    // Written straight to the database: no hook ran, so neither server's worker renders anything.
    for (const server of [a, b]) expect((await fetchPage(server, `/article/${edited.slug}`)).body).not.toContain('after repairs');

    const rebuild = await runRebuild(outDir, rebuildData, env);
    expect(rebuild.code, rebuild.output).toBe(0);
    expect(rebuild.output).toMatch(/\[rebuild\] done: incremental: /);
    expect(rebuild.output).toMatch(/other servers\s+[1-9]\d* page\(s\) and \d+ search bundle\(s\) stored and announced/);

    for (const server of [a, b]) {
      await waitFor(`the edited article on ${server.url}`, async () =>
        (await fetchPage(server, `/article/${edited.slug}`)).body.includes('after repairs'),
      );
      await waitFor(`the listing on ${server.url}`, async () => (await fetchPage(server, '/section/world')).body.includes('after repairs'));
      await waitFor(
        `the removed article gone from ${server.url}`,
        async () => (await fetchPage(server, `/article/${removed.slug}`)).status === 404,
      );
      expect(fs.existsSync(path.join(server.clientDir, 'article', removed.slug, 'index.html'))).toBe(false);
    }
    // Copied, not rendered: no server's worker rendered the article page itself.
    const rendered = (server: TestServer) =>
      server
        .output()
        .split('\n')
        .filter((line) => line.startsWith(`[publish] /article/${edited.slug} `));
    expect([...rendered(a), ...rendered(b)]).toEqual([]);
  }, 120_000);

  it('leaves a page whose job a server holds to that server, and takes it up on the next rebuild', async () => {
    const edited = made[0]!;
    const articlePath = `/article/${edited.slug}`;
    const store = await openStore(dataDir('meridian-rebuild-multi-claim-'), 'write', { databaseUrl: env.DATABASE_URL });
    try {
      await store.articles.replace({ ...edited, title: 'Harbour ferry timetable changes', updatedAt: new Date().toISOString() });
      // As a server's worker does before rendering: the job queued and claimed, its lease running.
      await store.jobs.enqueue([articlePath], new Date().toISOString());
      const job = (await store.jobs.list(100)).find((j) => j.path === articlePath)!;
      expect(await store.jobs.claim(job.id, 'another-server', Date.now() + 600_000, Date.now())).toBe(true);
      const storedBefore = (await store.pages.get(articlePath))?.seq;

      const held = await runRebuild(outDir, rebuildData, env);
      expect(held.code, held.output).toBe(0);
      expect(held.output).toMatch(/other servers\s+\d+ page\(s\) and \d+ search bundle\(s\) stored and announced in the database; 1 left/);
      // Neither rendered into the rebuild's folder nor stored over what the holder will store.
      expect((await store.pages.get(articlePath))?.seq).toBe(storedBefore);
      expect(fs.readFileSync(path.join(outDir, 'client', 'article', edited.slug, 'index.html'), 'utf8')).not.toContain('ferry timetable');

      // The holder finished without storing anything (say it crashed and its job was done by hand):
      // the page's input is still recorded as the old one, so the next rebuild renders it.
      await store.jobs.complete(job.id, new Date(Date.now() + 60_000).toISOString());
    } finally {
      await store.close();
    }
    const next = await runRebuild(outDir, rebuildData, env);
    expect(next.code, next.output).toBe(0);
    expect(next.output).toMatch(/; 0 left/);
    for (const server of [a, b])
      await waitFor(`the article on ${server.url}`, async () => (await fetchPage(server, articlePath)).body.includes('ferry timetable'));
  }, 120_000);

  it("says so when it runs on a server's DATA_DIR, where the database is open read-only", async () => {
    const beside = await runRebuild(outDir, a.dataDir, env);
    expect(beside.code, beside.output).toBe(0);
    expect(beside.output).toMatch(/other servers\s+NOT updated: a server holds this DATA_DIR, so the database is open read-only/);
  }, 120_000);
});
