/**
 * Issue 31, item 2 on the real built server: a real tmpfs mounted for the data folder, then for the
 * served folder, filled to the last byte and freed again. A write that cannot be stored answers 503
 * with Retry-After and says storage is full, the previous state stays (in the API, on disk, after a
 * restart), the server stays up, logs the cause once (not per request), /api/ready reports it, and
 * everything resumes without a restart once space is freed. On PostgreSQL the data folder holds only
 * uploads and images: the upload part runs there, the rest on lowdb.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import sharp from 'sharp';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { ROOT, makeDataDir, siteCopyFor, startServer, type TestServer } from '../helpers/server.ts';
import { testingPostgres } from '../helpers/postgres.ts';
import { asRoot, fillDisk, leftoverTempFiles, mountTmpfs } from '../helpers/tmpfs.ts';
import type { Article } from '../../src/schemas/article.ts';
import type { PublishingStatus } from '../../src/schemas/publishing.ts';
import { TestClient, adminClient, createArticle, expectDataFilesValid, read, waitFor, waitForIdleQueue } from './support.ts';

const APP_SECRET = 'test-secret-for-full-disk-0123456789abcdef';
const FULL = 'Storage is full; the change was not saved.';
const lowdb = !testingPostgres();

/** A 503 of a full disk: the message, Retry-After, the one error shape. */
async function expectStorageFull(response: Response, what: string): Promise<void> {
  const text = await response.text();
  expect(response.status, `${what}: ${text}`).toBe(503);
  expect(JSON.parse(text), what).toEqual({ error: FULL });
  expect(Number(response.headers.get('retry-after')), what).toBeGreaterThan(0);
}

async function readiness(server: TestServer): Promise<{ status: number; reason?: string }> {
  const response = await fetch(new URL('/api/ready', server.url));
  return { status: response.status, ...((await response.json()) as { reason?: string }) };
}

/** Log lines of `server` that contain `text`. */
const linesWith = (server: TestServer, text: string) =>
  server
    .output()
    .split('\n')
    .filter((line) => line.includes(text));

describe.skipIf(!asRoot)('a full data folder (needs root: mounts a tmpfs)', () => {
  let mount: { dir: string; unmount: () => void };
  let dataDir: string;
  let serveDir: string;
  let server: TestServer;
  let admin: TestClient;
  let article: Article;
  let png: Buffer;
  let free: (() => void) | undefined;

  const start = () => startServer({ dataDir, env: { TRUST_PROXY: 'true', APP_SECRET, SERVE_DIR: serveDir } });
  const getArticle = async () => (await read<Article>(await admin.get(`/api/articles/${article.id}`))).body;
  const comments = async () => (await admin.get(`/api/articles/${article.id}/comments`)).text();
  const uploadUrl = async () => ((await (await admin.post('/api/images/upload-url')).json()) as { uploadURL: string }).uploadURL;
  const put = (url: string) => admin.request('PUT', url, { body: new Uint8Array(png), headers: { 'Content-Type': 'image/png' } });

  beforeAll(async () => {
    png = await sharp({ create: { width: 640, height: 360, channels: 3, background: { r: 30, g: 90, b: 160 } } })
      .png()
      .toBuffer();
    mount = mountTmpfs(6);
    dataDir = path.join(mount.dir, 'data');
    // The served folder elsewhere: only the data folder fills up here.
    serveDir = siteCopyFor(makeDataDir());
    server = await start();
    admin = await adminClient(server);
    article = await createArticle(admin, { title: 'The river before the flood', status: 'published' });
    expect((await new TestClient(server.url).post(`/api/articles/${article.id}/comments`, sample(1))).status).toBe(201);
  }, 120_000);

  beforeEach(() => {
    onTestFailed(() => console.log(`--- server output (tail) ---\n${server?.output().slice(-6000)}`));
  });

  afterAll(async () => {
    free?.();
    await server?.stop();
    mount?.unmount();
  });

  it('answers writes 503 while full, keeps what was stored, and takes them again once space is freed, without a restart', async () => {
    const uploaded = await uploadUrl();
    expect((await put(uploaded)).status).toBe(204);
    const unused = await uploadUrl();
    const before = { article: await getArticle(), comments: await comments() };

    free = fillDisk(mount.dir);
    if (lowdb) {
      await expectStorageFull(
        await admin.put(`/api/articles/${article.id}`, { title: 'The river after the flood', version: before.article.version }),
        'save',
      );
      // The refused save is nowhere: not in the API, not in the article's file.
      expect(await getArticle()).toEqual(before.article);
      await expectStorageFull(
        await admin.post('/api/articles', { title: 'Never stored', bodyHtml: '<p>x</p>', status: 'published' }),
        'create',
      );
      expect((await read<Article[]>(await admin.get('/api/articles'))).body.map((a) => a.id)).toEqual([article.id]);
      await expectStorageFull(await admin.delete(`/api/articles/${article.id}`), 'delete');
      expect((await read<unknown[]>(await admin.get('/api/trash'))).body).toEqual([]);
      await expectStorageFull(await new TestClient(server.url).post(`/api/articles/${article.id}/like`), 'vote');
      await expectStorageFull(await new TestClient(server.url).post(`/api/articles/${article.id}/comments`, sample(2)), 'comment');
      await expectStorageFull(
        await new TestClient(server.url).post('/api/newsletter/subscribe', { email: 'reader@example.com' }),
        'subscribe',
      );
      await expectStorageFull(
        await new TestClient(server.url).post('/api/auth/login', { username: 'admin', password: 'correct-horse-battery' }),
        'sign-in',
      );
      expect(await getArticle()).toEqual(before.article);
      expect(await comments()).toBe(before.comments);
    }
    // Uploads and images are in DATA_DIR on both stores: the PUT stores nothing and leaves its URL unused,
    // normalizing keeps the upload for the retry.
    await expectStorageFull(await put(unused), 'upload');
    await expectStorageFull(await admin.post('/api/images/normalize', { imageUrl: uploaded }), 'normalize');

    // The server is up, says why it is not ready, and logged the cause once for all these requests.
    expect((await fetch(new URL('/api/health', server.url))).status).toBe(200);
    const ready = await readiness(server);
    expect(ready.status).toBe(503);
    expect(ready.reason).toMatch(/^data folder storage is full \(ENOSPC\)/);
    expect(linesWith(server, '[storage] the data folder')).toHaveLength(1);
    expect(linesWith(server, '[api] 503')).toEqual([]);
    expect(leftoverTempFiles(dataDir)).toEqual([]);
    expectDataFilesValid(dataDir);

    free();
    free = undefined;
    await waitFor('/api/ready once space is freed', async () => (await readiness(server)).status === 200, 30_000);
    if (lowdb) {
      const saved = await admin.put(`/api/articles/${article.id}`, { title: 'The river after the flood', version: before.article.version });
      expect(saved.status, await saved.clone().text()).toBe(200);
      expect((await getArticle()).title).toBe('The river after the flood');
      expect((await new TestClient(server.url).post(`/api/articles/${article.id}/like`)).status).toBe(200);
      expect((await new TestClient(server.url).post(`/api/articles/${article.id}/comments`, sample(2))).status).toBe(201);
      expect((await new TestClient(server.url).post('/api/newsletter/subscribe', { email: 'reader@example.com' })).status).toBe(200);
      await new TestClient(server.url).login();
    }
    expect((await put(unused)).status).toBe(204);
    for (const url of [uploaded, unused]) {
      const normalized = await admin.post('/api/images/normalize', { imageUrl: url });
      expect(normalized.status, await normalized.clone().text()).toBe(200);
    }
  });

  it.runIf(lowdb)('shows after a restart what the API showed: a refused save is not on disk', async () => {
    const before = await getArticle();
    expect(before.likes).toBe(1);
    free = fillDisk(mount.dir);
    await expectStorageFull(await admin.put(`/api/articles/${article.id}`, { title: 'Refused', version: before.version }), 'save');
    // A stop on a full disk still closes the store cleanly.
    await server.stop();
    expect(server.process.exitCode).toBe(0);
    free();
    free = undefined;
    expectDataFilesValid(dataDir);
    server = await start();
    admin = await adminClient(server);
    expect(await getArticle()).toEqual(before);
  });
});

function sample(n: number) {
  return { authorName: `Reader ${n}`, authorEmail: `reader${n}@example.com`, content: `Comment number ${n}` };
}

/** A copy of the build's served folder (and its render manifest) inside `root`, as siteCopyFor makes one. */
function siteCopyIn(root: string): string {
  const outDir = path.resolve(ROOT, process.env.OUT_DIR ?? 'dist');
  const clientDir = path.join(root, 'site', 'client');
  fs.cpSync(path.join(outDir, 'client'), clientDir, { recursive: true });
  const state = path.join(outDir, 'render-state.json');
  if (fs.existsSync(state)) fs.copyFileSync(state, path.join(root, 'site', 'render-state.json'));
  return clientDir;
}

describe.skipIf(!asRoot)('a full served folder (needs root: mounts a tmpfs)', () => {
  let mount: { dir: string; unmount: () => void };
  let clientDir: string;
  let server: TestServer;
  let admin: TestClient;
  let free: (() => void) | undefined;

  beforeAll(async () => {
    mount = mountTmpfs(8);
    clientDir = siteCopyIn(mount.dir);
    server = await startServer({ env: { TRUST_PROXY: 'true', SERVE_DIR: clientDir } });
    admin = await adminClient(server);
    await waitForIdleQueue(server.url, 90_000);
  }, 150_000);

  beforeEach(() => {
    // The readiness polls left out: they would fill the tail.
    onTestFailed(() =>
      console.log(
        `--- server output (tail) ---\n${server
          ?.output()
          .split('\n')
          .filter((line) => !line.includes('/api/ready 200'))
          .join('\n')
          .slice(-6000)}`,
      ),
    );
  });

  afterAll(async () => {
    free?.();
    await server?.stop();
    mount?.unmount();
  });

  it('stores the save, keeps the old page served whole, reports it, and writes the new page once space is freed', async () => {
    const article = await createArticle(admin, { title: 'Calm before the storm', status: 'published' });
    const page = path.join(clientDir, 'article', article.slug, 'index.html');
    const pageUrl = new URL(`/article/${article.slug}/`, server.url);
    await waitFor('the article page', async () => fs.existsSync(page) && fs.readFileSync(page, 'utf8').includes('Calm before the storm'));
    await waitForIdleQueue(server.url, 90_000);
    // Space the server is still giving back (an old search bundle or a replaced page held open) would
    // let the next writes succeed on the "full" disk: fill it once nothing changes its free space.
    await waitForSteadyFreeSpace(mount.dir);
    const oldPage = fs.readFileSync(page);
    const periods = fs.readFileSync(path.join(clientDir, 'pagefind', 'periods.json'), 'utf8');

    free = fillDisk(mount.dir);
    const saved = await admin.put(`/api/articles/${article.id}`, { title: 'After the storm' });
    expect(saved.status, await saved.clone().text()).toBe(200);
    await waitFor('/api/ready to report the served folder', async () =>
      /^served folder storage is full/.test((await readiness(server)).reason ?? ''),
    );
    // Stored: the API shows the new title; the page readers get is still the old one, whole, in every encoding.
    expect((await read<Article>(await admin.get(`/api/articles/${article.id}`))).body.title).toBe('After the storm');
    expect(fs.readFileSync(page).equals(oldPage)).toBe(true);
    const served = await fetch(pageUrl, { headers: { 'Accept-Encoding': 'identity' } });
    expect(served.status).toBe(200);
    expect(Buffer.from(await served.arrayBuffer()).equals(oldPage)).toBe(true);
    for (const twin of ['.br', '.gz'])
      if (fs.existsSync(page + twin)) {
        const bytes = fs.readFileSync(page + twin);
        expect((twin === '.br' ? zlib.brotliDecompressSync(bytes) : zlib.gunzipSync(bytes)).equals(oldPage), twin).toBe(true);
      }
    // The search bundles as they were, no half-written file or index folder left taking the space.
    expect(fs.readFileSync(path.join(clientDir, 'pagefind', 'periods.json'), 'utf8')).toBe(periods);
    // A few retries of the page: the cause once in the log, not one error per attempt. Looked at while
    // no job runs and none is due for a moment, so a try under way (a page or a search build) is not
    // mistaken for what failed tries left behind.
    await waitFor('three failed tries of the page, and every job waiting for its next try', async () => {
      const status = (await read<PublishingStatus>(await admin.get('/api/publishing'))).body;
      const tries = status.failed.find((job) => job.path === `/article/${article.slug}`)?.attempts ?? 0;
      const soon = Date.now() + 500;
      return (
        tries >= 3 &&
        status.waiting === 0 &&
        status.reconciling === 0 &&
        status.renderingNow.length === 0 &&
        status.search.state !== 'building' &&
        status.failed.every((job) => job.nextTryAt !== undefined && Date.parse(job.nextTryAt) > soon)
      );
    });
    expect(leftoverTempFiles(path.dirname(clientDir))).toEqual([]);
    expect(fs.readdirSync(path.join(clientDir, 'pagefind')).filter((name) => name.startsWith('.next-'))).toEqual([]);
    expect(linesWith(server, '[storage] the served folder')).toHaveLength(1);
    expect(linesWith(server, `/article/${article.slug} failed`)).toEqual([]);
    expect((await fetch(new URL('/api/health', server.url))).status).toBe(200);

    free();
    free = undefined;
    await waitFor('the new page once space is freed', async () => fs.readFileSync(page, 'utf8').includes('After the storm'), 30_000);
    expect(await (await fetch(pageUrl)).text()).toContain('After the storm');
    await waitFor('/api/ready once space is freed', async () => (await readiness(server)).status === 200, 30_000);
  }, 120_000);
});

/** Waits until the free space of the file system at `dir` has not changed for a second. */
async function waitForSteadyFreeSpace(dir: string): Promise<void> {
  let last = -1;
  let steadySince = performance.now();
  await waitFor('steady free space on the served folder', async () => {
    const free = fs.statfsSync(dir).bavail;
    if (free !== last) {
      last = free;
      steadySince = performance.now();
    }
    return performance.now() - steadySince >= 1000;
  });
}
