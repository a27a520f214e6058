/** Likes and dislikes: one vote per visitor, moving votes, live counts, rate limits and the admin adjustments. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import type { Article } from '../../src/schemas/article.ts';
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

beforeAll(async () => {
  server = await startApiServer();
  admin = await adminClient(server);
  article = await createArticle(admin, { title: 'Vote on me', status: 'published' });
  draft = await createArticle(admin, { title: 'Not public yet' });
});

afterAll(async () => {
  await server?.stop();
});

describe('POST /api/articles/{id}/like and /dislike', () => {
  it('counts one vote per visitor, idempotently, and moves it when it changes', async () => {
    const alice = new TestClient(server.url);
    const bob = new TestClient(server.url);
    const first = await read(await alice.post(`/api/articles/${article.id}/like`));
    expect(first).toEqual({ status: 200, body: { likes: 1, dislikes: 0, vote: 'like' } });
    const cookie = alice.cookies.get('vid');
    expect(cookie).toMatch(/^[a-z2-7]{26}$/);
    expect((await read(await alice.post(`/api/articles/${article.id}/like`))).body).toEqual({ likes: 1, dislikes: 0, vote: 'like' });
    expect(alice.cookies.get('vid')).toBe(cookie);
    expect((await read(await bob.post(`/api/articles/${article.id}/like`))).body).toEqual({ likes: 2, dislikes: 0, vote: 'like' });
    expect((await read(await alice.post(`/api/articles/${article.id}/dislike`))).body).toEqual({ likes: 1, dislikes: 1, vote: 'dislike' });
    expect((await read(await alice.post(`/api/articles/${article.id}/dislike`))).body).toEqual({ likes: 1, dislikes: 1, vote: 'dislike' });
  });

  it('sets the visitor cookie httpOnly', async () => {
    const client = new TestClient(server.url);
    const response = await client.post(`/api/articles/${article.id}/like`);
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith('vid='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
  });

  it('answers 404 for unknown and unpublished articles', async () => {
    const client = new TestClient(server.url);
    await expectError(await client.post('/api/articles/no-such-article/like'), 404);
    await expectError(await client.post(`/api/articles/${draft.id}/dislike`), 404);
  });

  it('takes no body (400), refuses foreign origins (403)', async () => {
    const client = new TestClient(server.url);
    await expectError(await client.post(`/api/articles/${article.id}/like`, { likes: 1000 }), 400);
    expect((await client.post(`/api/articles/${article.id}/like`, {})).status).toBe(200);
    await expectError(
      await client.request('POST', `/api/articles/${article.id}/like`, { headers: { Origin: 'https://evil.example' } }),
      403,
    );
  });

  it('rate limits per IP with 429 and Retry-After', async () => {
    const ip = '10.99.0.1';
    let limited: Response | undefined;
    for (let i = 0; i < 70 && !limited; i++) {
      // A new visitor each time: the limit is per address, not per cookie.
      const response = await new TestClient(server.url, ip).post(`/api/articles/${article.id}/like`);
      if (response.status === 429) limited = response;
      else expect(response.status).toBe(200);
    }
    expect(limited).toBeDefined();
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    await expectError(limited!, 429);
    // Another address is not affected.
    expect((await new TestClient(server.url).post(`/api/articles/${article.id}/like`)).status).toBe(200);
  });
});

describe('GET /api/articles/{id}/vote', () => {
  it("answers the counts and this visitor's vote", async () => {
    const article2 = await createArticle(admin, { title: 'Counts only', status: 'published' });
    const visitor = new TestClient(server.url);
    expect((await read(await visitor.get(`/api/articles/${article2.id}/vote`))).body).toEqual({ likes: 0, dislikes: 0, vote: null });
    await visitor.post(`/api/articles/${article2.id}/dislike`);
    expect((await read(await visitor.get(`/api/articles/${article2.id}/vote`))).body).toEqual({ likes: 0, dislikes: 1, vote: 'dislike' });
    expect((await read(await new TestClient(server.url).get(`/api/articles/${article2.id}/vote`))).body).toEqual({
      likes: 0,
      dislikes: 1,
      vote: null,
    });
    await expectError(await visitor.get(`/api/articles/${draft.id}/vote`), 404);
  });

  it('matches the counters on the article', async () => {
    const votes = await read<{ likes: number; dislikes: number }>(await new TestClient(server.url).get(`/api/articles/${article.id}/vote`));
    const detail = await read<Article>(await new TestClient(server.url).get(`/api/articles/${article.id}`));
    expect({ likes: detail.body.likes, dislikes: detail.body.dislikes }).toEqual({
      likes: votes.body.likes,
      dislikes: votes.body.dislikes,
    });
  });
});

describe('POST /api/admin/articles/{id}/adjust-likes and /adjust-dislikes', () => {
  it('adds and removes, never below zero', async () => {
    const target = await createArticle(admin, { title: 'Adjust me', status: 'published' });
    expect((await read(await admin.post(`/api/admin/articles/${target.id}/adjust-likes`, { amount: 5 }))).body).toEqual({
      likes: 5,
      dislikes: 0,
      views: 0,
    });
    expect((await read(await admin.post(`/api/admin/articles/${target.id}/adjust-likes`, { amount: -2 }))).body).toEqual({
      likes: 3,
      dislikes: 0,
      views: 0,
    });
    expect((await read(await admin.post(`/api/admin/articles/${target.id}/adjust-likes`, { amount: -10 }))).body).toEqual({
      likes: 0,
      dislikes: 0,
      views: 0,
    });
    expect((await read(await admin.post(`/api/admin/articles/${target.id}/adjust-dislikes`, { amount: 7 }))).body).toEqual({
      likes: 0,
      dislikes: 7,
      views: 0,
    });
    expect((await read(await new TestClient(server.url).get(`/api/articles/${target.id}/vote`))).body).toEqual({
      likes: 0,
      dislikes: 7,
      vote: null,
    });
    // Drafts can be adjusted too: the editor sees every status.
    expect((await admin.post(`/api/admin/articles/${draft.id}/adjust-likes`, { amount: 1 })).status).toBe(200);
  });

  it('refuses non-integer, zero, missing or huge amounts (400)', async () => {
    for (const body of [
      { amount: 0 },
      { amount: 1.5 },
      { amount: '3' },
      {},
      { amount: null },
      { amount: 10_000_000 },
      { amount: 1, extra: true },
    ]) {
      await expectError(await admin.post(`/api/admin/articles/${article.id}/adjust-likes`, body), 400);
    }
    await expectError(
      await admin.request('POST', `/api/admin/articles/${article.id}/adjust-dislikes`, {
        body: 'amount=1',
        headers: { 'Content-Type': 'text/plain' },
      }),
      415,
    );
  });

  it('is for admins only and answers 404 for unknown articles', async () => {
    await expectError(await new TestClient(server.url).post(`/api/admin/articles/${article.id}/adjust-likes`, { amount: 100 }), 401);
    await expectError(await admin.post('/api/admin/articles/no-such-article/adjust-dislikes', { amount: 1 }), 404);
  });
});

it('keeps votes out of the articles file and the data files valid JSON', async () => {
  expectDataFilesValid(server.dataDir);
  const votes = await readDataFile<{ votes: Record<string, Record<string, string>> }>(server.dataDir, 'votes');
  expect(Object.keys(votes.votes)).toContain(article.id);
  expect(JSON.stringify(await readDataFile(server.dataDir, 'articles'))).not.toMatch(/"likes"/);
});
