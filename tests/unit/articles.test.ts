/** The article domain: slugs, reading time, status and scheduledFor rules, visibility, scheduled publishing, votes and views. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  articleFilter,
  countSearchResults,
  createArticle,
  getArticle,
  getArticleBySlug,
  getVoteState,
  listArticles,
  countArticles,
  publishDueArticles,
  searchArticles,
  slugify,
  uniqueSlug,
  updateArticle,
  voteOnArticle,
  deleteArticle,
} from '../../src/server/articles.ts';
import { articleInputSchema } from '../../src/schemas/article.ts';
import { slugifyTerm } from '../../src/schemas/taxonomy.ts';
import { recordPageView } from '../../src/server/analytics/record.ts';
import { viewRecorderOf } from '../../src/server/analytics/recorder.ts';
import { computeReadingTime } from '../../src/server/html.ts';
import { purgeTrashed } from '../../src/server/trash.ts';
import { appErrorOf, articleRecord, makeRuntime } from './support.ts';

type TestRuntime = Awaited<ReturnType<typeof makeRuntime>>;
let runtime: TestRuntime;

beforeEach(async () => {
  runtime = await makeRuntime();
});

afterEach(async () => {
  await runtime.store.close();
});

/** The AppError status a call threw (undefined when it succeeded). */
const statusOf = async (promise: Promise<unknown>) => (await appErrorOf(promise))?.status;

const input = (fields: Record<string, unknown>) => articleInputSchema.parse(fields);

describe('slugify and uniqueSlug', () => {
  it('makes lowercase ASCII hyphenated slugs', () => {
    expect(slugify('Hello, World!')).toBe('hello-world');
    expect(slugify('  Crème brûlée à São Paulo  ')).toBe('creme-brulee-a-sao-paulo');
    expect(slugify('Tom & Jerry')).toBe('tom-and-jerry');
    expect(slugify('2025: the year -- in review')).toBe('2025-the-year-in-review');
    expect(slugify('日本語のみ')).toBe('article');
    expect(slugify('!!!')).toBe('article');
    const long = slugify('word '.repeat(40));
    expect(long.length).toBeLessThanOrEqual(80);
    expect(long).not.toMatch(/-$/);
  });

  it('follows the rule of tag and author slugs, longer', () => {
    const title = 'Crème & brûlée: ' + 'word '.repeat(20);
    expect(slugify(title).startsWith(slugifyTerm(title))).toBe(true);
    expect(slugifyTerm(title).length).toBeLessThanOrEqual(60);
    expect(slugify(title).length).toBeGreaterThan(60);
  });

  it('appends -2, -3 on collision, ignoring the article itself', async () => {
    await runtime.store.articles.insert(articleRecord({ id: 'a', slug: 'big-news' }));
    await runtime.store.articles.insert(articleRecord({ id: 'b', slug: 'big-news-2' }));
    expect(await uniqueSlug(runtime, 'Big News')).toBe('big-news-3');
    expect(await uniqueSlug(runtime, 'Big News', 'a')).toBe('big-news');
    expect(await uniqueSlug(runtime, 'Fresh')).toBe('fresh');
  });
});

describe('computeReadingTime', () => {
  it('counts body words at 200 a minute, at least 1, ignoring markup', () => {
    const words = (n: number) => Array.from({ length: n }, () => 'word').join(' ');
    expect(computeReadingTime('')).toBe(1);
    expect(computeReadingTime(`<p>${words(200)}</p>`)).toBe(1);
    expect(computeReadingTime(`<p>${words(201)}</p>`)).toBe(2);
    expect(computeReadingTime(`<p>${words(100)}</p><ul><li>${words(300)}</li></ul>`)).toBe(2);
    expect(computeReadingTime(`<p class="${words(500)}">one</p>`)).toBe(1);
  });
});

describe('createArticle and updateArticle: status and scheduledFor', () => {
  it('creates drafts without publishedAt and published ones with it', async () => {
    const draft = await createArticle(runtime, input({ title: 'Draft' }));
    expect(draft.status).toBe('draft');
    expect(draft.publishedAt).toBeUndefined();
    const published = await createArticle(runtime, input({ title: 'Live', status: 'published' }));
    expect(published.publishedAt).toBe(published.createdAt);
    expect(runtime.changes.flat().map((c) => c.after?.title)).toEqual(['Draft', 'Live']);
  });

  it('requires scheduledFor with scheduled, and refuses it with any other status', async () => {
    expect(await statusOf(createArticle(runtime, input({ title: 'S', status: 'scheduled' })))).toBe(400);
    for (const status of ['draft', 'published', 'archived']) {
      expect(await statusOf(createArticle(runtime, input({ title: 'S', status, scheduledFor: '2099-01-01T00:00:00Z' }))), status).toBe(400);
    }
    const scheduled = await createArticle(runtime, input({ title: 'S', status: 'scheduled', scheduledFor: '2099-01-01T01:00:00+01:00' }));
    expect(scheduled.scheduledFor).toBe('2099-01-01T00:00:00.000Z');
    expect(scheduled.publishedAt).toBeUndefined();
  });

  it('updates a part, keeps the slug, keeps scheduledFor only while scheduled', async () => {
    const article = await createArticle(runtime, input({ title: 'Original', status: 'scheduled', scheduledFor: '2099-01-01T00:00:00Z' }));
    const retitled = await updateArticle(runtime, article.id, { title: 'Renamed' });
    expect(retitled).toMatchObject({ title: 'Renamed', slug: 'original', status: 'scheduled', scheduledFor: '2099-01-01T00:00:00.000Z' });
    expect(await statusOf(updateArticle(runtime, article.id, { status: 'draft', scheduledFor: '2099-02-01T00:00:00Z' }))).toBe(400);
    const drafted = await updateArticle(runtime, article.id, { status: 'draft' });
    expect(drafted.scheduledFor).toBeUndefined();
    expect(await statusOf(updateArticle(runtime, article.id, { status: 'scheduled' }))).toBe(400);
    const published = await updateArticle(runtime, article.id, { status: 'published' });
    const first = published.publishedAt;
    expect(first).toEqual(expect.any(String));
    await updateArticle(runtime, article.id, { status: 'archived' });
    expect((await updateArticle(runtime, article.id, { status: 'published' })).publishedAt).toBe(first);
    expect(await statusOf(updateArticle(runtime, 'missing', { status: 'published' }))).toBe(404);
  });

  it('sanitises bodies and recomputes the reading time unless one is given', async () => {
    const article = await createArticle(runtime, input({ title: 'Body', bodyHtml: '<p>short</p><script>alert(1)</script>' }));
    expect(article.bodyHtml).toBe('<p>short</p>');
    const long = `<p>${'word '.repeat(450)}</p>`;
    expect((await updateArticle(runtime, article.id, { bodyHtml: long })).readingTime).toBe(3);
    expect((await updateArticle(runtime, article.id, { bodyHtml: '<p>x</p>', readingTime: 9 })).readingTime).toBe(9);
  });

  it('clears optional fields sent empty, and deletes into the trash (counters kept until the purge)', async () => {
    const article = await createArticle(runtime, input({ title: 'Clear', dek: 'Dek', heroImage: '/images/abc/1200.webp' }));
    const cleared = await updateArticle(runtime, article.id, { dek: undefined, heroImage: undefined });
    expect(cleared.dek).toBeUndefined();
    expect(cleared.heroImage).toBeUndefined();
    await runtime.store.counters.vote(article.id, 'v', 'like');
    await deleteArticle(runtime, article.id);
    expect(await runtime.store.articles.get(article.id)).toBeUndefined();
    expect(await runtime.store.trash.get(article.id)).toMatchObject({ article: { id: article.id } });
    expect((await runtime.store.counters.get(article.id)).likes).toBe(1);
    await purgeTrashed(runtime, article.id);
    expect(await runtime.store.counters.get(article.id)).toEqual({ likes: 0, dislikes: 0, views: 0 });
    expect(runtime.changes.at(-1)).toEqual([{ before: expect.objectContaining({ id: article.id }), after: undefined }]);
    expect(await statusOf(deleteArticle(runtime, article.id))).toBe(404);
  });
});

describe('visibility', () => {
  it('limits anonymous filters to published, whatever status is asked for', () => {
    expect(articleFilter({}, { isAdmin: false }).statuses).toEqual(['published']);
    expect(articleFilter({ status: 'draft' }, { isAdmin: false }).statuses).toEqual([]);
    expect(articleFilter({ status: 'published' }, { isAdmin: false }).statuses).toEqual(['published']);
    expect(articleFilter({}, { isAdmin: true }).statuses).toBeUndefined();
    expect(articleFilter({ status: 'draft' }, { isAdmin: true }).statuses).toEqual(['draft']);
  });

  it('hides unpublished articles from readers by id and slug, lists and counts consistently', async () => {
    const draft = await createArticle(runtime, input({ title: 'Hidden' }));
    const live = await createArticle(runtime, input({ title: 'Shown', status: 'published' }));
    const reader = { isAdmin: false };
    const admin = { isAdmin: true };
    expect(await statusOf(getArticle(runtime, draft.id, reader))).toBe(404);
    expect(await statusOf(getArticleBySlug(runtime, draft.slug, reader))).toBe(404);
    expect((await getArticle(runtime, draft.id, admin)).id).toBe(draft.id);
    expect((await getArticleBySlug(runtime, live.slug, reader)).id).toBe(live.id);
    const query = { page: 1, pageSize: 12 };
    expect((await listArticles(runtime, query, reader)).map((a) => a.id)).toEqual([live.id]);
    expect(await countArticles(runtime, {}, reader)).toBe(1);
    expect(await countArticles(runtime, {}, admin)).toBe(2);
    expect(await listArticles(runtime, { ...query, limit: 1 }, admin)).toHaveLength(1);
  });

  it('searches published articles only, with a count that matches', async () => {
    await createArticle(runtime, input({ title: 'Harbour strike', status: 'published', section: 'business' }));
    await createArticle(runtime, input({ title: 'Harbour draft' }));
    const result = await searchArticles(runtime, { q: 'harbour', page: 1, pageSize: 12, section: 'all' });
    expect(result.items.map((a) => a.title)).toEqual(['Harbour strike']);
    expect(result.items[0]).not.toHaveProperty('bodyHtml');
    expect(await countSearchResults(runtime, { q: 'harbour', section: 'all' })).toBe(1);
    expect(await countSearchResults(runtime, { q: 'harbour', section: 'tech' })).toBe(0);
  });
});

describe('publishDueArticles', () => {
  it('publishes each due article exactly once, even when called concurrently', async () => {
    const due = await createArticle(runtime, input({ title: 'Due', status: 'scheduled', scheduledFor: '2020-01-01T00:00:00Z' }));
    const future = await createArticle(runtime, input({ title: 'Future', status: 'scheduled', scheduledFor: '2099-01-01T00:00:00Z' }));
    runtime.changes.length = 0;
    const now = '2025-01-01T00:00:00.000Z';
    const results = await Promise.all([
      publishDueArticles(runtime, now),
      publishDueArticles(runtime, now),
      publishDueArticles(runtime, now),
    ]);
    expect(results.flat().map((a) => a.id)).toEqual([due.id]);
    expect(runtime.changes.flat().map((c) => c.after?.id)).toEqual([due.id]);
    expect(await publishDueArticles(runtime, now)).toEqual([]);
    expect(await runtime.store.articles.get(due.id)).toMatchObject({ status: 'published', publishedAt: now });
    expect((await runtime.store.articles.get(future.id))?.status).toBe('scheduled');
  });
});

describe('votes and views', () => {
  it('votes on published articles only and answers the visitor state', async () => {
    const live = await createArticle(runtime, input({ title: 'Votes', status: 'published' }));
    const draft = await createArticle(runtime, input({ title: 'No votes' }));
    expect(await voteOnArticle(runtime, live.id, 'v1', 'like')).toEqual({ likes: 1, dislikes: 0, vote: 'like' });
    expect(await getVoteState(runtime, live.id, 'v1')).toEqual({ likes: 1, dislikes: 0, vote: 'like' });
    expect(await getVoteState(runtime, live.id, undefined)).toEqual({ likes: 1, dislikes: 0, vote: null });
    expect(await statusOf(voteOnArticle(runtime, draft.id, 'v1', 'like'))).toBe(404);
    expect(await statusOf(getVoteState(runtime, 'missing', 'v1'))).toBe(404);
  });

  it('counts views of published article paths only', async () => {
    const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36';
    const live = await createArticle(runtime, input({ title: 'Viewed', status: 'published' }));
    const draft = await createArticle(runtime, input({ title: 'Unviewed' }));
    for (const path of [
      `/article/${live.slug}`,
      `/article/${live.slug}/`,
      '/section/world',
      `/article/${draft.slug}`,
      '/article/%E0%A4%A',
      '/article/',
    ]) {
      await recordPageView(runtime, { path }, { userAgent: BROWSER, refererHeader: null, signedIn: false });
    }
    // Staff and bots are not counted (issue 33).
    await recordPageView(runtime, { path: `/article/${live.slug}` }, { userAgent: BROWSER, refererHeader: null, signedIn: true });
    await recordPageView(runtime, { path: `/article/${live.slug}` }, { userAgent: 'Googlebot/2.1', refererHeader: null, signedIn: false });
    // Batched with the view buckets: stored by the recorder's flush (every 2 s, and on stop).
    expect((await runtime.store.counters.get(live.id)).views).toBe(0);
    await viewRecorderOf(runtime).stop();
    expect((await runtime.store.counters.get(live.id)).views).toBe(2);
    expect((await runtime.store.counters.get(draft.id)).views).toBe(0);
  });
});
