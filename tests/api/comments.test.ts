/** Comments: the public thread, posting (validation, honeypot, rate limit), moderation and the admin listing. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import type { Article } from '../../src/schemas/article.ts';
import type { Comment } from '../../src/schemas/comment.ts';
import {
  TestClient,
  adminClient,
  createArticle,
  expectDataFilesValid,
  expectError,
  read,
  readDataFile,
  startApiServer,
} from './support.ts';

let server: TestServer;
let admin: TestClient;
let article: Article;
let draft: Article;

const sample = (n: number) => ({ authorName: `Reader ${n}`, authorEmail: `reader${n}@example.com`, content: `Comment number ${n}` });

async function post(articleId: string, body: unknown, client = new TestClient(server.url)): Promise<Response> {
  return client.post(`/api/articles/${articleId}/comments`, body);
}

beforeAll(async () => {
  server = await startApiServer();
  admin = await adminClient(server);
  article = await createArticle(admin, { title: 'Discuss this', status: 'published' });
  draft = await createArticle(admin, { title: 'Quiet draft' });
});

afterAll(async () => {
  await server?.stop();
});

describe('POST /api/articles/{id}/comments', () => {
  it('adds a visible plain-text comment (201) without echoing the e-mail', async () => {
    const { status, body } = await read(await post(article.id, { ...sample(1), content: '  <b>Bold</b> claim  ' }));
    expect(status).toBe(201);
    expect(body).toMatchObject({
      id: expect.any(String),
      articleId: article.id,
      authorName: 'Reader 1',
      content: '<b>Bold</b> claim',
      status: 'visible',
      createdAt: expect.any(String),
    });
    expect(body).not.toHaveProperty('authorEmail');
  });

  it('validates fields with readable messages (400)', async () => {
    const client = new TestClient(server.url);
    const cases: [unknown, string][] = [
      [{ ...sample(2), authorName: '' }, 'authorName'],
      [{ ...sample(2), authorEmail: 'no-at-sign' }, 'authorEmail'],
      [{ ...sample(2), content: '   ' }, 'content'],
      [{ ...sample(2), content: 'x'.repeat(5001) }, 'content'],
      [{ ...sample(2), authorName: 'n'.repeat(101) }, 'authorName'],
      [{ ...sample(2), authorEmail: `${'e'.repeat(250)}@x.io` }, 'authorEmail'],
      [{ ...sample(2), status: 'hidden' }, ''],
    ];
    for (const [body, field] of cases) {
      // A fresh address each time: the comment limit is tight (5 a minute).
      const error = await expectError(await post(article.id, body), 400);
      if (field) expect(error.issues?.[0]?.path).toEqual([field]);
    }
    await expectError(
      await client.request('POST', `/api/articles/${article.id}/comments`, {
        body: '{"authorName":',
        headers: { 'Content-Type': 'application/json' },
      }),
      400,
    );
    await expectError(
      await new TestClient(server.url).request('POST', `/api/articles/${article.id}/comments`, {
        body: 'authorName=x',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      }),
      415,
    );
    const huge = JSON.stringify({ ...sample(2), content: 'x'.repeat(1024 * 1024 + 1) });
    await expectError(
      await new TestClient(server.url).request('POST', `/api/articles/${article.id}/comments`, {
        body: huge,
        headers: { 'Content-Type': 'application/json' },
      }),
      413,
    );
  });

  it('accepts a filled honeypot silently but stores nothing', async () => {
    const before = (await readDataFile<{ comments: Comment[] }>(server.dataDir, 'comments')).comments.length;
    const response = await post(article.id, { ...sample(3), website: 'http://spam.example' });
    expect(response.status).toBe(201);
    expect((await readDataFile<{ comments: Comment[] }>(server.dataDir, 'comments')).comments.length).toBe(before);
  });

  it('answers 404 for unknown and unpublished articles, 403 for a foreign origin', async () => {
    await expectError(await post('no-such-article', sample(4)), 404);
    await expectError(await post(draft.id, sample(4)), 404);
    await expectError(
      await new TestClient(server.url).request('POST', `/api/articles/${article.id}/comments`, {
        json: sample(4),
        headers: { Origin: 'https://evil.example' },
      }),
      403,
    );
  });

  it('rate limits per IP with 429 and Retry-After', async () => {
    const ip = '10.98.0.1';
    const statuses: number[] = [];
    let limited: Response | undefined;
    for (let i = 0; i < 8 && !limited; i++) {
      const response = await post(article.id, sample(100 + i), new TestClient(server.url, ip));
      statuses.push(response.status);
      if (response.status === 429) limited = response;
    }
    expect(statuses).toEqual([201, 201, 201, 201, 201, 429]);
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    await expectError(limited!, 429);
  });
});

describe('GET /api/articles/{id}/comments', () => {
  it('lists visible comments newest first without e-mail for readers; all with e-mail for admins', async () => {
    const target = await createArticle(admin, { title: 'Thread order', status: 'published' });
    const ids: string[] = [];
    for (const n of [1, 2, 3]) ids.push((await read<Comment>(await post(target.id, sample(n)))).body.id);
    const hidden = await admin.put(`/api/comments/${ids[1]}/status`, { status: 'hidden' });
    expect(hidden.status).toBe(200);

    const publicList = await read<Comment[]>(await new TestClient(server.url).get(`/api/articles/${target.id}/comments`));
    expect(publicList.status).toBe(200);
    expect(publicList.body.map((c) => c.id)).toEqual([ids[2], ids[0]]);
    expect(publicList.body.every((c) => !('authorEmail' in c))).toBe(true);

    const adminList = await read<Comment[]>(await admin.get(`/api/articles/${target.id}/comments`));
    expect(adminList.body.map((c) => c.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect(adminList.body.map((c) => c.status)).toEqual(['visible', 'hidden', 'visible']);
    expect(adminList.body[0]!.authorEmail).toBe('reader3@example.com');
  });

  it('answers 404 for unknown articles, and for drafts to readers only', async () => {
    await expectError(await new TestClient(server.url).get('/api/articles/no-such-article/comments'), 404);
    await expectError(await new TestClient(server.url).get(`/api/articles/${draft.id}/comments`), 404);
    expect((await read(await admin.get(`/api/articles/${draft.id}/comments`))).body).toEqual([]);
  });
});

describe('PUT /api/comments/{id}/status and DELETE /api/comments/{id}', () => {
  it('hides, shows and deletes for admins; 401 for readers; 404 for unknown ids', async () => {
    const comment = (await read<Comment>(await post(article.id, sample(50)))).body;
    const reader = new TestClient(server.url);
    await expectError(await reader.put(`/api/comments/${comment.id}/status`, { status: 'hidden' }), 401);
    await expectError(await reader.delete(`/api/comments/${comment.id}`), 401);
    expect((await read(await admin.put(`/api/comments/${comment.id}/status`, { status: 'hidden' }))).body).toMatchObject({
      id: comment.id,
      status: 'hidden',
    });
    expect((await read<Comment[]>(await reader.get(`/api/articles/${article.id}/comments`))).body.map((c) => c.id)).not.toContain(
      comment.id,
    );
    expect((await read(await admin.put(`/api/comments/${comment.id}/status`, { status: 'visible' }))).body).toMatchObject({
      status: 'visible',
    });
    expect((await read<Comment[]>(await reader.get(`/api/articles/${article.id}/comments`))).body.map((c) => c.id)).toContain(comment.id);
    await expectError(await admin.put(`/api/comments/${comment.id}/status`, { status: 'deleted' }), 400);
    await expectError(await admin.put(`/api/comments/${comment.id}/status`, {}), 400);
    await expectError(await admin.put('/api/comments/no-such-comment/status', { status: 'hidden' }), 404);
    await expectError(await admin.request('DELETE', `/api/comments/${comment.id}`, { headers: { Origin: 'https://evil.example' } }), 403);
    const deleted = await admin.delete(`/api/comments/${comment.id}`);
    expect(deleted.status).toBe(204);
    await expectError(await admin.delete(`/api/comments/${comment.id}`), 404);
  });

  it('keeps the comments of a trashed article for a restore, and removes them when it is purged', async () => {
    const target = await createArticle(admin, { title: 'Short lived', status: 'published' });
    await post(target.id, sample(60));
    expect((await admin.delete(`/api/articles/${target.id}`)).status).toBe(204);
    const kept = (await readDataFile<{ comments: Comment[] }>(server.dataDir, 'comments')).comments;
    expect(kept.some((c) => c.articleId === target.id)).toBe(true);
    await expectError(await new TestClient(server.url).get(`/api/articles/${target.id}/comments`), 404);
    expect((await admin.delete(`/api/trash/${target.id}`)).status).toBe(204);
    const all = (await readDataFile<{ comments: Comment[] }>(server.dataDir, 'comments')).comments;
    expect(all.some((c) => c.articleId === target.id)).toBe(false);
  });
});

describe('GET /api/admin/comments and /count', () => {
  it('lists every comment with e-mail, filters by status and search, with counts that agree', async () => {
    const reader = new TestClient(server.url);
    await expectError(await reader.get('/api/admin/comments'), 401);
    await expectError(await reader.get('/api/admin/comments/count'), 401);
    for (const query of [
      '',
      '?status=visible',
      '?status=hidden',
      '?search=reader1',
      '?search=REFERENCE-NOT-FOUND',
      '?search=comment%20number&status=visible',
    ]) {
      const list = await read<Comment[]>(await admin.get(`/api/admin/comments${query}${query ? '&' : '?'}pageSize=100`));
      const count = await read<{ count: number }>(await admin.get(`/api/admin/comments/count${query}`));
      expect(list.status).toBe(200);
      expect(count.body.count, query).toBe(list.body.length);
    }
    const hidden = (await read<Comment[]>(await admin.get('/api/admin/comments?status=hidden'))).body;
    expect(hidden.length).toBeGreaterThan(0);
    expect(hidden.every((c) => c.status === 'hidden' && typeof c.authorEmail === 'string')).toBe(true);
  });

  it('pages 20 by default, newest first', async () => {
    const total = (await read<{ count: number }>(await admin.get('/api/admin/comments/count'))).body.count;
    const target = await createArticle(admin, { title: 'Busy thread', status: 'published' });
    for (let i = 0; i < Math.max(0, 21 - total); i++) await post(target.id, sample(200 + i));
    const first = (await read<Comment[]>(await admin.get('/api/admin/comments'))).body;
    expect(first).toHaveLength(20);
    const dates = first.map((c) => c.createdAt);
    expect([...dates].sort().reverse()).toEqual(dates);
    const second = (await read<Comment[]>(await admin.get('/api/admin/comments?page=2'))).body;
    expect(second.map((c) => c.id)).not.toContain(first[0]!.id);
    for (const query of ['?pageSize=101', '?page=0', '?status=spam'])
      await expectError(await admin.get(`/api/admin/comments${query}`), 400);
  });
});

it('keeps the data files valid JSON after the bad input', () => {
  expectDataFilesValid(server.dataDir);
});
