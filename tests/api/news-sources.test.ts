/** /api/news-sources: admin-only CRUD of RSS (and future API) sources, and the fetch-now placeholder. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import type { NewsSource } from '../../src/schemas/source.ts';
import { TestClient, adminClient, expectDataFilesValid, expectError, read, startApiServer } from './support.ts';

let server: TestServer;
let admin: TestClient;
let reader: TestClient;

beforeAll(async () => {
  server = await startApiServer();
  admin = await adminClient(server);
  reader = new TestClient(server.url);
});

afterAll(async () => {
  await server?.stop();
});

describe('POST and GET /api/news-sources', () => {
  it('creates a source enabled, of type rss by default (201), and lists it', async () => {
    const { status, body } = await read<NewsSource>(
      await admin.post('/api/news-sources', { name: 'Wire', url: 'https://wire.example/feed.xml', section: 'world' }),
    );
    expect(status).toBe(201);
    expect(body).toMatchObject({
      id: expect.any(String),
      name: 'Wire',
      type: 'rss',
      url: 'https://wire.example/feed.xml',
      section: 'world',
      enabled: true,
      createdAt: expect.any(String),
    });
    const api = await read<NewsSource>(
      await admin.post('/api/news-sources', {
        name: 'Future',
        type: 'api',
        url: 'https://api.example/v1',
        section: 'tech',
        enabled: false,
      }),
    );
    expect(api.body).toMatchObject({ type: 'api', enabled: false });
    const list = await read<NewsSource[]>(await admin.get('/api/news-sources'));
    expect(list.status).toBe(200);
    expect(list.body.map((s) => s.id)).toEqual([body.id, api.body.id]);
  });

  it('answers 409 for a URL already configured', async () => {
    await admin.post('/api/news-sources', { name: 'Dup', url: 'https://dup.example/rss', section: 'business' });
    await expectError(
      await admin.post('/api/news-sources', { name: 'Dup again', url: 'https://dup.example/rss', section: 'tech' }),
      409,
      /already exists/,
    );
  });

  it('validates the body (400, 415)', async () => {
    for (const body of [
      { name: '', url: 'https://a.example/rss', section: 'world' },
      { name: 'No url', section: 'world' },
      { name: 'Bad url', url: 'ftp://a.example/rss', section: 'world' },
      { name: 'Bad url', url: 'javascript:alert(1)', section: 'world' },
      { name: 'Bad section', url: 'https://a.example/rss', section: 'markets' },
      { name: 'Bad type', url: 'https://a.example/rss', section: 'world', type: 'atom' },
      { name: 'No section', url: 'https://a.example/rss' },
      { name: 'Extra', url: 'https://a.example/rss', section: 'world', lastFetchedAt: '2025-01-01' },
    ]) {
      const error = await expectError(await admin.post('/api/news-sources', body), 400);
      expect(error.issues?.length).toBeGreaterThan(0);
    }
    await expectError(
      await admin.request('POST', '/api/news-sources', { body: '[', headers: { 'Content-Type': 'application/json' } }),
      400,
    );
    await expectError(await admin.request('POST', '/api/news-sources', { body: 'x', headers: { 'Content-Type': 'text/plain' } }), 415);
  });

  it('is for admins only (401) and same-origin only (403)', async () => {
    await expectError(await reader.get('/api/news-sources'), 401);
    await expectError(await reader.post('/api/news-sources', { name: 'Nope', url: 'https://nope.example/rss', section: 'world' }), 401);
    await expectError(
      await admin.request('POST', '/api/news-sources', {
        json: { name: 'Nope', url: 'https://nope.example/rss', section: 'world' },
        headers: { Origin: 'https://evil.example' },
      }),
      403,
    );
  });
});

describe('PUT and DELETE /api/news-sources/{id}', () => {
  it('toggles enabled, deletes (204), and answers 404 afterwards', async () => {
    const source = (
      await read<NewsSource>(
        await admin.post('/api/news-sources', { name: 'Toggle', url: 'https://toggle.example/rss', section: 'sports' }),
      )
    ).body;
    expect((await read<NewsSource>(await admin.put(`/api/news-sources/${source.id}`, { enabled: false }))).body.enabled).toBe(false);
    expect((await read<NewsSource>(await admin.put(`/api/news-sources/${source.id}`, { enabled: true }))).body.enabled).toBe(true);
    await expectError(await admin.put(`/api/news-sources/${source.id}`, { enabled: 'yes' }), 400);
    await expectError(await admin.put(`/api/news-sources/${source.id}`, { enabled: false, url: 'https://other.example' }), 400);
    await expectError(await reader.put(`/api/news-sources/${source.id}`, { enabled: false }), 401);
    await expectError(await reader.delete(`/api/news-sources/${source.id}`), 401);
    const deleted = await admin.delete(`/api/news-sources/${source.id}`);
    expect(deleted.status).toBe(204);
    await expectError(await admin.delete(`/api/news-sources/${source.id}`), 404);
    await expectError(await admin.put(`/api/news-sources/${source.id}`, { enabled: true }), 404);
    expect((await read<NewsSource[]>(await admin.get('/api/news-sources'))).body.map((s) => s.id)).not.toContain(source.id);
  });
});

describe('POST /api/news-sources/{id}/fetch', () => {
  it('needs a session', async () => {
    await expectError(await reader.post('/api/news-sources/any-id/fetch'), 401);
  });

  it('answers for admins (the ingestion engineer replaces the placeholder)', async () => {
    const source = (
      await read<NewsSource>(
        await admin.post('/api/news-sources', { name: 'Fetch me', url: 'https://fetch.example/rss', section: 'world' }),
      )
    ).body;
    const response = await admin.post(`/api/news-sources/${source.id}/fetch`);
    // 501 while feed fetching is not built; afterwards a JSON answer of its own.
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.status).not.toBe(500);
  });
});

it('keeps the data files valid JSON after the bad input', () => {
  expectDataFilesValid(server.dataDir);
});
