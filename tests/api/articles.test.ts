/** /api/articles: listing with visibility and filters, counts, stats, detail by id and slug, the editor's writes. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import type { Article, ArticleStats } from '../../src/schemas/article.ts';
import { TestClient, adminClient, createArticle, expectDataFilesValid, expectError, read, startApiServer } from './support.ts';

let server: TestServer;
let admin: TestClient;
let reader: TestClient;
const made: Record<string, Article> = {};

beforeAll(async () => {
  server = await startApiServer();
  admin = await adminClient(server);
  reader = new TestClient(server.url);
  made.world = await createArticle(admin, {
    title: 'Ocean treaty signed',
    section: 'world',
    status: 'published',
    isBreaking: true,
    tags: ['oceans'],
    authorName: 'Ana Ruiz',
  });
  made.tech = await createArticle(admin, {
    title: 'Chip makers expand',
    section: 'tech',
    status: 'published',
    sourceLabel: 'Wire Service',
    sourceUrl: 'https://wire.example/chips',
  });
  made.draft = await createArticle(admin, { title: 'Unfinished draft', section: 'world' });
  made.scheduled = await createArticle(admin, {
    title: 'Tomorrow morning',
    section: 'business',
    status: 'scheduled',
    scheduledFor: '2099-01-01T08:00:00Z',
  });
  made.archived = await createArticle(admin, { title: 'Old news', section: 'world', status: 'published' });
  const archived = await admin.put(`/api/articles/${made.archived.id}`, { status: 'archived' });
  expect(archived.status).toBe(200);
});

afterAll(async () => {
  await server?.stop();
});

async function list(client: TestClient, query = ''): Promise<Article[]> {
  const { status, body } = await read<Article[]>(await client.get(`/api/articles${query}`));
  expect(status).toBe(200);
  return body;
}

async function count(client: TestClient, query = ''): Promise<number> {
  const { status, body } = await read<{ count: number }>(await client.get(`/api/articles/count${query}`));
  expect(status).toBe(200);
  return body.count;
}

describe('POST /api/articles', () => {
  it('creates with defaults, a slug, a reading time and sanitised HTML (201)', async () => {
    const words = Array.from({ length: 450 }, (_, i) => `word${i}`).join(' ');
    const article = await createArticle(admin, {
      title: 'Héllo, Wörld & Friends!',
      bodyHtml: `<p onclick="x()">${words}</p><script>alert(1)</script>`,
    });
    expect(article).toMatchObject({
      id: expect.any(String),
      slug: 'hello-world-and-friends',
      section: 'home',
      status: 'draft',
      tags: [],
      readingTime: 3,
      likes: 0,
      dislikes: 0,
      views: 0,
      isBreaking: false,
      isEditorsPick: false,
    });
    expect(article.bodyHtml).not.toMatch(/script|onclick/);
    expect(article.publishedAt).toBeUndefined();
    expect(article).not.toHaveProperty('origin');
  });

  it('makes slugs unique and keeps them when the title changes', async () => {
    const a = await createArticle(admin, { title: 'Same title' });
    const b = await createArticle(admin, { title: 'Same title' });
    expect([a.slug, b.slug]).toEqual(['same-title', 'same-title-2']);
    const { body } = await read<Article>(await admin.put(`/api/articles/${a.id}`, { title: 'A new title' }));
    expect(body.title).toBe('A new title');
    expect(body.slug).toBe('same-title');
  });

  it('sets publishedAt when published and refuses scheduled without a date', async () => {
    expect(made.world!.publishedAt).toEqual(expect.any(String));
    const missing = await expectError(await admin.post('/api/articles', { title: 'No date', status: 'scheduled' }), 400);
    expect(missing.issues?.[0]?.path).toEqual(['scheduledFor']);
    await expectError(
      await admin.post('/api/articles', { title: 'Date on a draft', status: 'draft', scheduledFor: '2099-01-01T00:00:00Z' }),
      400,
      /scheduled/,
    );
    await expectError(await admin.post('/api/articles', { title: 'Bad date', status: 'scheduled', scheduledFor: 'tomorrow' }), 400);
  });

  it('validates the body: 400 with issues, never a 500', async () => {
    const empty = await expectError(await admin.post('/api/articles', { title: '   ' }), 400);
    expect(empty.issues?.[0]?.path).toEqual(['title']);
    await expectError(await admin.post('/api/articles', { title: 'x', section: 'markets' }), 400, /section/);
    await expectError(await admin.post('/api/articles', { title: 'x', status: 'live' }), 400);
    await expectError(await admin.post('/api/articles', { title: 'x', tags: 'a,b' }), 400);
    await expectError(await admin.post('/api/articles', { title: 'x', heroImage: 'javascript:alert(1)' }), 400);
    await expectError(await admin.post('/api/articles', { title: 'x', heroImage: '/images/../../etc/passwd' }), 400);
    await expectError(await admin.post('/api/articles', { title: 'x', likes: 1000 }), 400);
    await expectError(await admin.post('/api/articles', null), 400);
    await expectError(await admin.post('/api/articles', 'a string'), 400);
    await expectError(
      await admin.request('POST', '/api/articles', { body: '{"title": "x",}', headers: { 'Content-Type': 'application/json' } }),
      400,
      /Malformed/,
    );
    await expectError(
      await admin.request('POST', '/api/articles', { body: '\xff\xfe', headers: { 'Content-Type': 'application/json' } }),
      400,
    );
    await expectError(
      await admin.request('POST', '/api/articles', { body: '{"title":"x"}', headers: { 'Content-Type': 'text/plain' } }),
      415,
    );
    const huge = JSON.stringify({ title: 'x', bodyHtml: 'y'.repeat(1024 * 1024 + 1) });
    await expectError(await admin.request('POST', '/api/articles', { body: huge, headers: { 'Content-Type': 'application/json' } }), 413);
  });

  it('needs a session (401, also with a forged cookie) and a same-origin request (403)', async () => {
    await expectError(await reader.post('/api/articles', { title: 'Sneaky' }), 401);
    const forged = new TestClient(server.url);
    forged.cookies.set('session', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa');
    await expectError(await forged.post('/api/articles', { title: 'Sneaky' }), 401);
    await expectError(
      await admin.request('POST', '/api/articles', { json: { title: 'Cross' }, headers: { Origin: 'https://evil.example' } }),
      403,
    );
  });
});

describe('GET /api/articles and /api/articles/count', () => {
  it('shows readers published articles only, whatever status they ask for', async () => {
    const items = await list(reader, '?pageSize=100');
    expect(items.map((a) => a.status)).toEqual(items.map(() => 'published'));
    expect(items.map((a) => a.id)).toEqual(expect.arrayContaining([made.world!.id, made.tech!.id]));
    expect(items.map((a) => a.id)).not.toContain(made.draft!.id);
    expect(await list(reader, '?status=draft')).toEqual([]);
    expect(await count(reader, '?status=draft')).toBe(0);
    expect(await count(reader, '?status=scheduled')).toBe(0);
  });

  it('shows admins every status and filters by it', async () => {
    const drafts = await list(admin, '?status=draft&pageSize=100');
    expect(drafts.map((a) => a.id)).toContain(made.draft!.id);
    expect(drafts.every((a) => a.status === 'draft')).toBe(true);
    expect((await list(admin, '?status=scheduled')).map((a) => a.id)).toEqual([made.scheduled!.id]);
    expect((await list(admin, '?status=archived')).map((a) => a.id)).toEqual([made.archived!.id]);
  });

  it('filters by section, breaking, source, search and dates, with counts that agree', async () => {
    const queries = [
      '',
      '?section=world',
      '?section=tech',
      '?isBreaking=true',
      '?isBreaking=false',
      '?source=wire',
      '?search=ocean',
      '?search=ana%20ruiz',
      '?search=oceans',
      '?dateFrom=2000-01-01&dateTo=2099-12-31',
      '?dateTo=2000-01-01',
      '?dateFrom=2000-01-01T00:00:00Z',
      '?section=world&status=draft',
      '?status=published&section=world&isBreaking=true',
    ];
    for (const client of [reader, admin]) {
      for (const query of queries) {
        const items = await list(client, `${query}${query ? '&' : '?'}pageSize=100`);
        expect(await count(client, query), `${query} (${client === admin ? 'admin' : 'reader'})`).toBe(items.length);
      }
    }
    expect((await list(reader, '?section=tech')).map((a) => a.id)).toEqual([made.tech!.id]);
    expect((await list(reader, '?isBreaking=true')).map((a) => a.id)).toEqual([made.world!.id]);
    expect((await list(reader, '?source=wire')).map((a) => a.id)).toEqual([made.tech!.id]);
    expect((await list(reader, '?search=ocean')).map((a) => a.id)).toEqual([made.world!.id]);
    expect(await list(reader, '?dateTo=2000-01-01')).toEqual([]);
  });

  it('pages newest first with page, pageSize and limit', async () => {
    const all = await list(admin, '?pageSize=100');
    const total = await count(admin);
    expect(all).toHaveLength(total);
    const dates = all.map((a) => a.publishedAt ?? a.updatedAt);
    expect([...dates].sort().reverse()).toEqual(dates);
    const first = await list(admin, '?page=1&pageSize=2');
    const second = await list(admin, '?page=2&pageSize=2');
    expect([...first, ...second].map((a) => a.id)).toEqual(all.slice(0, 4).map((a) => a.id));
    expect(await list(admin, '?limit=3')).toHaveLength(3);
    expect(await list(admin, '?page=1000')).toEqual([]);
    // The default page size is 12.
    for (let i = 0; i < 12; i++) await createArticle(admin, { title: `Filler ${i}`, status: 'published', section: 'sports' });
    expect(await list(reader)).toHaveLength(12);
    expect(await count(reader, '?section=sports')).toBe(12);
  });

  it('answers 400 for bad paging and filters', async () => {
    for (const query of [
      '?pageSize=101',
      '?page=0',
      '?page=-1',
      '?page=abc',
      '?pageSize=0',
      '?limit=101',
      '?limit=0',
      '?section=markets',
      '?status=live',
      '?isBreaking=yes',
      '?dateFrom=yesterday',
      '?dateTo=2025-13-45',
    ]) {
      const body = await expectError(await reader.get(`/api/articles${query}`), 400);
      expect(body.issues?.length, query).toBeGreaterThan(0);
      await expectError(await reader.get(`/api/articles/count${query}`), 400);
    }
  });
});

describe('GET /api/articles/stats', () => {
  it('answers totals per status to admins only', async () => {
    await expectError(await reader.get('/api/articles/stats'), 401);
    const { status, body } = await read<ArticleStats>(await admin.get('/api/articles/stats'));
    expect(status).toBe(200);
    expect(body.totalArticles).toBe(await count(admin));
    expect(body.published).toBe(await count(admin, '?status=published'));
    expect(body.drafts).toBe(await count(admin, '?status=draft'));
    expect(body.scheduled).toBe(1);
    expect(body.totalArticles).toBe(body.published + body.drafts + body.scheduled + body.archived);
  });
});

describe('GET /api/articles/{id} and /api/articles/by-slug/{slug}', () => {
  it('answers a published article to anyone', async () => {
    const byId = await read<Article>(await reader.get(`/api/articles/${made.world!.id}`));
    expect(byId.status).toBe(200);
    expect(byId.body).toMatchObject({ id: made.world!.id, title: 'Ocean treaty signed', tags: ['oceans'], likes: 0, dislikes: 0 });
    const bySlug = await read<Article>(await reader.get(`/api/articles/by-slug/${made.world!.slug}`));
    expect(bySlug.body).toEqual(byId.body);
  });

  it('hides drafts, scheduled and archived articles from readers (404) but not from admins', async () => {
    for (const key of ['draft', 'scheduled', 'archived']) {
      const article = made[key]!;
      await expectError(await reader.get(`/api/articles/${article.id}`), 404);
      await expectError(await reader.get(`/api/articles/by-slug/${article.slug}`), 404);
      expect((await admin.get(`/api/articles/${article.id}`)).status).toBe(200);
      expect((await admin.get(`/api/articles/by-slug/${article.slug}`)).status).toBe(200);
    }
    const scheduled = await read<Article>(await admin.get(`/api/articles/${made.scheduled!.id}`));
    expect(scheduled.body.scheduledFor).toBe('2099-01-01T08:00:00.000Z');
  });

  it('answers 404 for unknown ids and slugs', async () => {
    await expectError(await reader.get('/api/articles/no-such-id'), 404);
    await expectError(await admin.get('/api/articles/by-slug/no-such-slug'), 404);
    await expectError(await admin.put('/api/articles/no-such-id', { status: 'published' }), 404);
    await expectError(await admin.delete('/api/articles/no-such-id'), 404);
  });
});

describe('PUT /api/articles/{id}', () => {
  it('accepts just a status (publish, unpublish, republish) and keeps the first publishedAt', async () => {
    const article = await createArticle(admin, { title: 'Status walk' });
    const published = await read<Article>(await admin.put(`/api/articles/${article.id}`, { status: 'published' }));
    expect(published.status).toBe(200);
    expect(published.body.status).toBe('published');
    const firstPublishedAt = published.body.publishedAt;
    expect(firstPublishedAt).toEqual(expect.any(String));
    expect((await reader.get(`/api/articles/${article.id}`)).status).toBe(200);
    const archived = await read<Article>(await admin.put(`/api/articles/${article.id}`, { status: 'archived' }));
    expect(archived.body.status).toBe('archived');
    await expectError(await reader.get(`/api/articles/${article.id}`), 404);
    const republished = await read<Article>(await admin.put(`/api/articles/${article.id}`, { status: 'published' }));
    expect(republished.body.publishedAt).toBe(firstPublishedAt);
  });

  it('accepts the full editor body and clears optional fields sent empty', async () => {
    const article = await createArticle(admin, { title: 'Full edit', dek: 'A dek', heroImage: 'https://img.example/a.jpg' });
    const { status, body } = await read<Article>(
      await admin.put(`/api/articles/${article.id}`, {
        title: 'Full edit, revised',
        dek: '',
        bodyHtml: '<h2>New</h2><p>Body <a href="javascript:alert(1)">x</a></p>',
        section: 'culture',
        tags: ['art', 'art', 'film'],
        authorName: 'Desk',
        heroImage: '',
        isBreaking: true,
        isEditorsPick: true,
        status: 'draft',
      }),
    );
    expect(status).toBe(200);
    expect(body).toMatchObject({
      title: 'Full edit, revised',
      section: 'culture',
      tags: ['art', 'film'],
      authorName: 'Desk',
      isBreaking: true,
      isEditorsPick: true,
    });
    expect(body.dek).toBeUndefined();
    expect(body.heroImage).toBeUndefined();
    expect(body.bodyHtml).not.toMatch(/javascript/);
  });

  it('keeps scheduledFor only on scheduled articles', async () => {
    const article = await createArticle(admin, { title: 'Scheduling rules' });
    await expectError(await admin.put(`/api/articles/${article.id}`, { scheduledFor: '2099-05-01T10:00:00Z' }), 400, /scheduled/);
    await expectError(await admin.put(`/api/articles/${article.id}`, { status: 'scheduled' }), 400);
    const scheduled = await read<Article>(
      await admin.put(`/api/articles/${article.id}`, { status: 'scheduled', scheduledFor: '2099-05-01T12:00:00+02:00' }),
    );
    expect(scheduled.status).toBe(200);
    expect(scheduled.body.scheduledFor).toBe('2099-05-01T10:00:00.000Z');
    const published = await read<Article>(await admin.put(`/api/articles/${article.id}`, { status: 'published' }));
    expect(published.body.status).toBe('published');
    expect(published.body.scheduledFor).toBeUndefined();
  });

  it('answers 400 for bad updates and 401 without a session', async () => {
    await expectError(await admin.put(`/api/articles/${made.draft!.id}`, { status: 'live' }), 400);
    await expectError(await admin.put(`/api/articles/${made.draft!.id}`, { slug: 'hijack' }), 400);
    await expectError(await admin.put(`/api/articles/${made.draft!.id}`, { title: '' }), 400);
    await expectError(
      await admin.request('PUT', `/api/articles/${made.draft!.id}`, { body: '{', headers: { 'Content-Type': 'application/json' } }),
      400,
    );
    await expectError(await reader.put(`/api/articles/${made.draft!.id}`, { status: 'published' }), 401);
    await expectError(
      await admin.request('PUT', `/api/articles/${made.draft!.id}`, {
        json: { status: 'published' },
        headers: { Origin: 'https://evil.example' },
      }),
      403,
    );
  });
});

describe('DELETE /api/articles/{id}', () => {
  it('deletes (204) for admins only, then answers 404', async () => {
    const article = await createArticle(admin, { title: 'To be deleted', status: 'published' });
    await expectError(await reader.delete(`/api/articles/${article.id}`), 401);
    await expectError(await admin.request('DELETE', `/api/articles/${article.id}`, { headers: { Origin: 'https://evil.example' } }), 403);
    const response = await admin.delete(`/api/articles/${article.id}`);
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    await expectError(await admin.get(`/api/articles/${article.id}`), 404);
    await expectError(await admin.delete(`/api/articles/${article.id}`), 404);
  });
});

describe('methods', () => {
  it('answers 405 with Allow for a method a route does not serve', async () => {
    const response = await admin.request('PATCH', `/api/articles/${made.world!.id}`, { json: { title: 'x' } });
    await expectError(response, 405);
    expect(response.headers.get('allow')).toBe('GET, PUT, DELETE, HEAD');
    await expectError(await admin.delete('/api/articles'), 405);
  });
});

it('keeps the data files valid JSON after the bad input', () => {
  expectDataFilesValid(server.dataDir);
});
