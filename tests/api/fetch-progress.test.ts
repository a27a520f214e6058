/** GET /api/news-sources/progress and each source's last result: Fetch Now's live counts, against a local feed server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FetchProgress, NewsSource } from '../../src/schemas/source.ts';
import { readFixture, startFeedServer, type FeedServer } from '../fixtures/feeds/feed-server.ts';
import { adminClient, expectError, read, startApiServer, TestClient, waitFor } from './support.ts';
import type { TestServer } from '../helpers/server.ts';

let feeds: FeedServer;
let server: TestServer;
let admin: TestClient;
let counter = 0;

beforeAll(async () => {
  feeds = await startFeedServer();
  server = await startApiServer();
  admin = await adminClient(server);
});

afterAll(async () => {
  await server?.stop();
  await feeds?.close();
});

async function addSource(path: string): Promise<NewsSource> {
  const { status, body } = await read<NewsSource>(
    await admin.post('/api/news-sources', { name: `Progress ${++counter}`, url: `${feeds.url}${path}`, section: 'tech' }),
  );
  expect(status).toBe(201);
  return body;
}

async function runOf(source: NewsSource): Promise<FetchProgress | undefined> {
  const { status, body } = await read<{ runs: FetchProgress[] }>(await admin.get('/api/news-sources/progress'));
  expect(status).toBe(200);
  return body.runs.find((run) => run.sourceId === source.id);
}

async function sourceNow(source: NewsSource): Promise<NewsSource> {
  const { body } = await read<NewsSource[]>(await admin.get('/api/news-sources'));
  return body.find((s) => s.id === source.id)!;
}

/** A feed of three items: one article, the same guid again (skipped), and one with neither guid nor link (refused). */
const MIXED_FEED = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>Mixed</title><link>https://mixed.example/</link><description>Mixed</description>
<item><title>Kept story</title><link>https://mixed.example/kept</link><guid>https://mixed.example/kept</guid><description>Kept text.</description></item>
<item><title>Kept story again</title><link>https://mixed.example/kept</link><guid>https://mixed.example/kept</guid><description>Again.</description></item>
<item><description>An item with no identity at all.</description></item>
</channel></rss>`;

describe('fetch progress', () => {
  it('shows a run while its feed downloads, then its counts, and keeps the result on the source', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    feeds.route('/held/rss2sample.xml', async (_req, res) => {
      await held;
      res.writeHead(200, { 'Content-Type': 'application/rss+xml' });
      res.end(readFixture('rss2sample.xml'));
    });
    const source = await addSource('/held/rss2sample.xml');
    expect(await runOf(source)).toBeUndefined();

    const fetching = admin.post(`/api/news-sources/${source.id}/fetch`);
    const running = await waitFor('the run to start', async () => runOf(source));
    expect(running).toMatchObject({ state: 'running', phase: 'downloading', read: 0, created: 0, updated: 0, skipped: 0, refused: 0 });
    expect(running.finishedAt).toBeUndefined();
    release();
    const answer = await read<{ message: string }>(await fetching);
    expect(answer).toEqual({ status: 200, body: { message: 'Fetched 4 items, 4 new' } });

    const done = await runOf(source);
    expect(done).toMatchObject({
      state: 'done',
      phase: 'done',
      read: 4,
      created: 4,
      updated: 0,
      skipped: 0,
      refused: 0,
      message: 'Fetched 4 items, 4 new',
    });
    expect(Date.parse(done!.finishedAt!)).toBeGreaterThanOrEqual(Date.parse(done!.startedAt));
    const stored = await sourceNow(source);
    expect(stored.lastResult).toBe('Read 4 items: 4 new, 0 updated, 0 skipped, 0 refused');
    expect(stored.lastError).toBeUndefined();
    expect(stored.failingSince).toBeUndefined();

    // The same feed again (this route sends no validators): every item is read and skipped as unchanged.
    await admin.post(`/api/news-sources/${source.id}/fetch`);
    expect(await runOf(source)).toMatchObject({ state: 'done', read: 4, created: 0, skipped: 4 });
    expect((await sourceNow(source)).lastResult).toBe('Read 4 items: 0 new, 0 updated, 4 skipped, 0 refused');
  });

  it('counts skipped and refused items of one feed', async () => {
    feeds.route('/mixed.xml', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/rss+xml' });
      res.end(MIXED_FEED);
    });
    const source = await addSource('/mixed.xml');
    expect((await admin.post(`/api/news-sources/${source.id}/fetch`)).status).toBe(200);
    expect(await runOf(source)).toMatchObject({ state: 'done', read: 3, created: 1, updated: 0, skipped: 1, refused: 1 });
    expect((await sourceNow(source)).lastResult).toBe('Read 3 items: 1 new, 0 updated, 1 skipped, 1 refused');
  });

  it('keeps when a failing source began to fail, until a fetch succeeds', async () => {
    let healthy = false;
    feeds.route('/flaky.xml', (_req, res) => {
      if (!healthy) {
        res.writeHead(500, { 'Content-Type': 'text/plain' });
        res.end('down');
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/rss+xml' });
      res.end(MIXED_FEED.replaceAll('mixed.example', 'flaky.example'));
    });
    const source = await addSource('/flaky.xml');
    expect((await admin.post(`/api/news-sources/${source.id}/fetch`)).status).toBe(502);
    expect(await runOf(source)).toMatchObject({ state: 'failed', phase: 'done', error: 'The feed server answered HTTP 500' });
    const first = await sourceNow(source);
    expect(first).toMatchObject({
      lastError: 'The feed server answered HTTP 500',
      lastResult: 'Failed: The feed server answered HTTP 500',
    });
    expect(first.failingSince).toBe(first.lastFetchedAt);

    expect((await admin.post(`/api/news-sources/${source.id}/fetch`)).status).toBe(502);
    const second = await sourceNow(source);
    expect(second.failingSince).toBe(first.failingSince);
    expect(Date.parse(second.lastFetchedAt!)).toBeGreaterThanOrEqual(Date.parse(first.lastFetchedAt!));

    healthy = true;
    expect((await admin.post(`/api/news-sources/${source.id}/fetch`)).status).toBe(200);
    const recovered = await sourceNow(source);
    expect(recovered.lastError).toBeUndefined();
    expect(recovered.failingSince).toBeUndefined();
    expect(recovered.lastResult).toBe('Read 3 items: 1 new, 0 updated, 1 skipped, 1 refused');
  });

  it('is for admins only', async () => {
    await expectError(await new TestClient(server.url).get('/api/news-sources/progress'), 401);
  });
});
