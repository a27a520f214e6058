/** /api/search and /api/search/count: published articles only, relevance then recency, sections, paging. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import type { ArticleSummary } from '../../src/schemas/article.ts';
import { TestClient, adminClient, createArticle, expectDataFilesValid, expectError, read, startApiServer } from './support.ts';

let server: TestServer;
let reader: TestClient;

beforeAll(async () => {
  server = await startApiServer();
  const admin = await adminClient(server);
  reader = new TestClient(server.url);
  await createArticle(admin, {
    title: 'Glacier melt accelerates',
    section: 'world',
    status: 'published',
    dek: 'Scientists warn',
    bodyHtml: '<p>Ice sheets shrink.</p>',
  });
  await createArticle(admin, {
    title: 'Markets shrug',
    section: 'business',
    status: 'published',
    bodyHtml: '<p>A note on the glacier fund.</p>',
  });
  await createArticle(admin, { title: 'Glacier draft', section: 'world', bodyHtml: '<p>Unpublished glacier notes.</p>' });
  await createArticle(admin, {
    title: 'Football final',
    section: 'sports',
    status: 'published',
    tags: ['glacier-cup'],
    authorName: 'Sam Stone',
  });
  for (let i = 0; i < 14; i++) await createArticle(admin, { title: `Election update ${i}`, section: 'politics', status: 'published' });
});

afterAll(async () => {
  await server?.stop();
});

async function search(query: string): Promise<ArticleSummary[]> {
  const { status, body } = await read<ArticleSummary[]>(await reader.get(`/api/search?${query}`));
  expect(status).toBe(200);
  return body;
}

async function count(query: string): Promise<number> {
  const { status, body } = await read<{ count: number }>(await reader.get(`/api/search/count?${query}`));
  expect(status).toBe(200);
  return body.count;
}

describe('GET /api/search', () => {
  it('finds published articles only, title matches first, as card summaries', async () => {
    const results = await search('q=glacier');
    expect(results.map((r) => r.title)).toEqual(['Glacier melt accelerates', 'Football final', 'Markets shrug']);
    expect(Object.keys(results[0]!).sort()).toEqual(
      ['authorName', 'dek', 'id', 'isBreaking', 'isEditorsPick', 'publishedAt', 'readingTime', 'section', 'slug', 'title'].sort(),
    );
    expect(results[0]).not.toHaveProperty('bodyHtml');
    expect(await count('q=glacier')).toBe(3);
  });

  it('searches dek, body, author and tags, case and accent insensitive, with prefixes', async () => {
    expect((await search('q=SCIENTISTS')).map((r) => r.title)).toEqual(['Glacier melt accelerates']);
    expect((await search('q=sheets')).map((r) => r.title)).toEqual(['Glacier melt accelerates']);
    expect((await search('q=stone')).map((r) => r.title)).toEqual(['Football final']);
    expect((await search('q=gl%C3%A1cier%20melt')).map((r) => r.title)).toEqual(['Glacier melt accelerates']);
    expect((await search('q=glac')).length).toBe(3);
    expect(await search('q=nothing-matches-this')).toEqual([]);
    expect(await count('q=nothing-matches-this')).toBe(0);
  });

  it('filters by section (all or one) with counts that agree', async () => {
    for (const query of [
      'q=glacier&section=all',
      'q=glacier&section=world',
      'q=glacier&section=business',
      'q=glacier&section=tech',
      'q=glacier&section=',
      'q=election&section=politics',
    ]) {
      expect(await count(query), query).toBe((await search(`${query}&pageSize=100`)).length);
    }
    expect((await search('q=glacier&section=business')).map((r) => r.title)).toEqual(['Markets shrug']);
  });

  it('pages 12 by default', async () => {
    expect(await count('q=election')).toBe(14);
    const first = await search('q=election');
    const second = await search('q=election&page=2');
    expect(first).toHaveLength(12);
    expect(second).toHaveLength(2);
    expect(new Set([...first, ...second].map((r) => r.id)).size).toBe(14);
    expect(await search('q=election&pageSize=5&page=3')).toHaveLength(4);
  });

  it('answers 400 for a missing query, an unknown section and bad paging', async () => {
    for (const path of ['/api/search', '/api/search/count']) {
      await expectError(await reader.get(path), 400, /q/);
      await expectError(await reader.get(`${path}?q=%20%20`), 400);
      const markets = await expectError(await reader.get(`${path}?q=glacier&section=markets`), 400, /Unknown section "markets"/);
      expect(markets.issues?.[0]?.path).toEqual(['section']);
      await expectError(await reader.get(`${path}?q=${'x'.repeat(201)}`), 400);
    }
    await expectError(await reader.get('/api/search?q=glacier&pageSize=101'), 400);
    await expectError(await reader.get('/api/search?q=glacier&page=0'), 400);
  });
});

it('keeps the data files valid JSON', () => {
  expectDataFilesValid(server.dataDir);
});
