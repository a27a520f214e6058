/**
 * The dashboard's Publishing panel API (issue 33) on the real built server, on both stores: a render
 * that really fails (a file where the article's folder must be, so the write meets ENOTDIR) shows in
 * `failed` with its error, and once the cause is gone a Retry has it written at once (before the
 * worker's own backoff would have tried it), in `recent`; the roles, bad input and unknown ids.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import type { Article } from '../../src/schemas/article.ts';
import type { PublishingStatus } from '../../src/schemas/publishing.ts';
import { adminClient, createArticle, expectError, read, startApiServer, TestClient, waitFor, waitForIdleQueue } from './support.ts';

let server: TestServer;
let admin: TestClient;
const clients = new Map<string, TestClient>();

async function signInAs(role: 'editor' | 'author' | 'contributor'): Promise<TestClient> {
  const created = await admin.post('/api/users', { username: `the-${role}`, role, password: `the-${role}-password` });
  expect(created.status, await created.clone().text()).toBe(201);
  const client = new TestClient(server.url);
  await client.login(`the-${role}`, `the-${role}-password`);
  return client;
}

async function status(client: TestClient = admin): Promise<PublishingStatus> {
  const { status: code, body } = await read<PublishingStatus>(await client.get('/api/publishing'));
  expect(code).toBe(200);
  return body;
}

beforeAll(async () => {
  server = await startApiServer();
  admin = await adminClient(server);
  for (const role of ['editor', 'author', 'contributor'] as const) clients.set(role, await signInAs(role));
  clients.set('anonymous', new TestClient(server.url));
}, 120_000);

beforeEach(() => {
  onTestFailed(() => console.log(`--- server output (tail) ---\n${server?.output().slice(-6000)}`));
});

afterAll(async () => {
  await server?.stop();
});

describe('GET /api/publishing and POST /api/publishing/retry', () => {
  it('answer admins and editors only', async () => {
    for (const who of ['editor', 'author', 'contributor', 'anonymous']) {
      const client = clients.get(who)!;
      const expected = who === 'editor' ? 200 : who === 'anonymous' ? 401 : 403;
      const got = await client.get('/api/publishing');
      expect(got.status, `${who} GET`).toBe(expected);
      const retried = await client.post('/api/publishing/retry', { all: true });
      expect(retried.status, `${who} POST`).toBe(expected);
    }
  });

  it('refuses bad input with 400 and an unknown job with 404', async () => {
    for (const body of [{}, { id: '' }, { id: 'abc' }, { id: 12 }, { all: false }, { id: '1', extra: true }]) {
      await expectError(await admin.post('/api/publishing/retry', body), 400);
    }
    await expectError(await admin.post('/api/publishing/retry', { id: '987654321' }), 404, /not found/);
    await expectError(await admin.post('/api/publishing/retry', { id: 'local-987654321' }), 404, /not found/);
  });

  it('shows a render that fails with its error, and a retry after the cause is fixed writes it at once', async () => {
    await waitForIdleQueue(server.url, 60_000);
    const draft = await createArticle(admin, { title: 'The bridge that would not render' });
    const articlePath = `/article/${draft.slug}`;
    // A file where the article's folder must be: the write of article/<slug>/index.html meets ENOTDIR, even as root.
    const blocker = path.join(server.clientDir, 'article', draft.slug);
    fs.mkdirSync(path.dirname(blocker), { recursive: true });
    fs.writeFileSync(blocker, 'not a folder');

    const published = await admin.put(`/api/articles/${draft.id}`, { status: 'published' });
    expect(published.status, await published.clone().text()).toBe(200);
    expect(((await published.json()) as Article).status).toBe('published');

    // Three attempts: the worker's next try of its own is then 4 s away, time enough to see the retry beat it.
    const failing = await waitFor(`${articlePath} in failed with 3 attempts`, async () => {
      const seen = await status();
      const job = seen.failed.find((entry) => entry.path === articlePath);
      return job && job.attempts >= 3 && job.nextTryAt ? { seen, job } : undefined;
    });
    expect(failing.job.error).toMatch(/^ENOTDIR: not a directory/);
    expect(failing.job.error).toContain(`/article/${draft.slug}/index.html`);
    // The machine's folders are not shown: paths are the site's.
    expect(failing.job.error).not.toContain(server.clientDir);
    expect(failing.seen.recent.some((entry) => entry.path === articlePath && entry.outcome === 'written')).toBe(false);
    // The editor sees the same failure (the queue, not one client's view).
    expect((await status(clients.get('editor'))).failed.map((entry) => entry.id)).toContain(failing.job.id);

    fs.rmSync(blocker);
    const asked = Date.now();
    const { status: code, body } = await read<{ retried: number; message: string }>(
      await admin.post('/api/publishing/retry', { id: failing.job.id }),
    );
    expect(code, JSON.stringify(body)).toBe(200);
    expect(body).toEqual({ retried: 1, message: `Retrying ${articlePath}` });

    const written = await waitFor(`${articlePath} written in recent`, async () =>
      (await status()).recent.find((entry) => entry.path === articlePath && entry.outcome === 'written'),
    );
    // Written on the retry, not on the worker's own next try.
    expect(Date.parse(written.at)).toBeGreaterThanOrEqual(asked - 1000);
    expect(Date.parse(written.at)).toBeLessThan(Date.parse(failing.job.nextTryAt!));
    expect(written.ms).toBeGreaterThan(0);
    expect(fs.readFileSync(path.join(blocker, 'index.html'), 'utf8')).toContain('The bridge that would not render');
    const page = await fetch(new URL(articlePath, server.url));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('The bridge that would not render');

    const after = await status();
    expect(after.failed.find((entry) => entry.path === articlePath)).toBeUndefined();
    // Done: the job left the queue, so a second retry finds nothing to retry.
    await expectError(await admin.post('/api/publishing/retry', { id: failing.job.id }), 404, /not found/);
    expect((await read(await admin.post('/api/publishing/retry', { all: true }))).body).toEqual({
      retried: 0,
      message: 'Nothing has failed',
    });

    // Idle by the panel's own figures (on PostgreSQL the server's own search jobs are not in /api/health's count).
    const idle = await waitFor('an idle panel', async () => {
      const seen = await status();
      return seen.waiting === 0 && seen.search.state === 'idle' ? seen : undefined;
    });
    expect(idle).toMatchObject({ waiting: 0, renderingNow: [], failed: [], reconciling: 0 });
    expect(idle.search.state).toBe('idle');
    expect(idle.search.lastBuiltAt).toEqual(expect.any(String));
    expect(idle.recent.length).toBeLessThanOrEqual(20);
  }, 90_000);
});
