/** POST /api/analytics/pageview: the first-party beacon (JSON or text/plain), article views, validation, rate limit. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import type { Article } from '../../src/schemas/article.ts';
import { TestClient, adminClient, createArticle, expectDataFilesValid, expectError, read, startApiServer } from './support.ts';

let server: TestServer;
let admin: TestClient;
let article: Article;

beforeAll(async () => {
  server = await startApiServer();
  admin = await adminClient(server);
  article = await createArticle(admin, { title: 'Read me', status: 'published' });
});

afterAll(async () => {
  await server?.stop();
});

async function views(id: string): Promise<number> {
  return (await read<Article>(await admin.get(`/api/articles/${id}`))).body.views;
}

/** The running total once the recorder's flush (every 2 s) has stored it. */
async function eventualViews(id: string, expected: number): Promise<number> {
  for (let i = 0; i < 50 && (await views(id)) !== expected; i++) await new Promise((resolve) => setTimeout(resolve, 200));
  return views(id);
}

/** A reader's browser: node's fetch says `node`, which is not counted (a bot, issue 33). */
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36';

describe('POST /api/analytics/pageview', () => {
  it('answers 204 and counts article views (JSON and sendBeacon text/plain)', async () => {
    const client = new TestClient(server.url);
    const json = await client.request('POST', '/api/analytics/pageview', {
      json: { path: `/article/${article.slug}` },
      headers: { 'User-Agent': BROWSER },
    });
    expect(json.status).toBe(204);
    expect(await json.text()).toBe('');
    const beacon = await client.request('POST', '/api/analytics/pageview', {
      body: JSON.stringify({ path: `/article/${article.slug}` }),
      headers: { 'Content-Type': 'text/plain;charset=UTF-8', 'User-Agent': BROWSER },
    });
    expect(beacon.status).toBe(204);
    expect(await eventualViews(article.id, 2)).toBe(2);
  });

  it('accepts other site paths without counting article views', async () => {
    const client = new TestClient(server.url);
    for (const path of ['/section/world', '/search?q=x', '/article/unknown-slug', '/article/%E0%A4%A']) {
      expect((await client.post('/api/analytics/pageview', { path })).status, path).toBe(204);
    }
    const draft = await createArticle(admin, { title: 'Draft view' });
    expect((await client.post('/api/analytics/pageview', { path: `/article/${draft.slug}` })).status).toBe(204);
    expect(await views(draft.id)).toBe(0);
    expect(await views(article.id)).toBe(2);
  });

  // A beacon without a session is answered by our server before Astro, one with a session by the Astro
  // route (staff): both doors give the same answers.
  it.each([
    ['a reader (our server answers)', () => new TestClient(server.url)],
    ['staff (the Astro route answers)', () => admin],
  ])('refuses bad paths and bodies (400, 415, 413, 403): %s', async (_who, clientOf) => {
    const client = clientOf();
    for (const body of [
      { path: 'https://evil.example/' },
      { path: '' },
      { path: '/a b' },
      {},
      { path: `/${'x'.repeat(600)}` },
      { path: '/', extra: 1 },
    ]) {
      await expectError(await client.post('/api/analytics/pageview', body), 400);
    }
    await expectError(
      await client.request('POST', '/api/analytics/pageview', { body: 'path=/', headers: { 'Content-Type': 'text/plain' } }),
      400,
      /Malformed/,
    );
    await expectError(
      await client.request('POST', '/api/analytics/pageview', {
        body: '{"path":"/"}',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      }),
      415,
    );
    await expectError(
      await client.request('POST', '/api/analytics/pageview', {
        body: JSON.stringify({ path: `/${'x'.repeat(10_000)}` }),
        headers: { 'Content-Type': 'application/json' },
      }),
      413,
    );
    await expectError(
      await client.request('POST', '/api/analytics/pageview', { json: { path: '/' }, headers: { Origin: 'https://evil.example' } }),
      403,
      /Cross-origin request refused/,
    );
    const accepted = await client.post('/api/analytics/pageview', { path: '/section/world' });
    expect(accepted.status).toBe(204);
    expect(accepted.headers.get('cache-control')).toBe('no-store');
    expect(accepted.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('rate limits per IP with 429 and Retry-After', async () => {
    const client = new TestClient(server.url, '10.96.0.1');
    let limited: Response | undefined;
    let accepted = 0;
    for (let i = 0; i < 130 && !limited; i++) {
      const response = await client.post('/api/analytics/pageview', { path: '/section/world' });
      if (response.status === 429) limited = response;
      else accepted++;
    }
    expect(accepted).toBe(120);
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    await expectError(limited!, 429);
  });
});

it('keeps the data files valid JSON after the bad input', () => {
  expectDataFilesValid(server.dataDir);
});
