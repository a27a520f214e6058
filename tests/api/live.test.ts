/**
 * Live coverage (issue 35) on the real built server, on either store (TEST_STORE=pg for PostgreSQL):
 * starting and ending coverage, posting, editing and deleting updates (sanitised, audited, never a new
 * article version, so an open editor meets no 409), roles, 400/404/409, the files an update writes
 * (the page, live.json, the feeds) and the structured data readers and search engines get.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import type { Article } from '../../src/schemas/article.ts';
import type { AuditEntry } from '../../src/schemas/audit.ts';
import type { Role } from '../../src/schemas/auth.ts';
import type { LiveCoverage, LiveFeed, LiveState, LiveUpdate } from '../../src/schemas/live.ts';
import { TestClient, adminClient, createArticle, expectError, read, startApiServer, waitFor, waitForIdleQueue } from './support.ts';

let server: TestServer;
let admin: TestClient;
let reader: TestClient;

async function fetchPath(publicPath: string): Promise<{ status: number; text: string; headers: Headers }> {
  const response = await fetch(new URL(publicPath, server.url), { redirect: 'manual' });
  return { status: response.status, text: await response.text(), headers: response.headers };
}

/**
 * What schema.org defines for the types a live article's JSON-LD uses, as listed on
 * https://schema.org/LiveBlogPosting (its own properties) and up its chain
 * LiveBlogPosting > BlogPosting > SocialMediaPosting > Article > CreativeWork > Thing (the
 * properties we use of each: https://schema.org/Article, https://schema.org/CreativeWork, https://schema.org/Thing).
 */
const SCHEMA_ORG_PROPERTIES = {
  LiveBlogPosting: ['coverageStartTime', 'coverageEndTime', 'liveBlogUpdate'],
  Article: ['articleBody', 'articleSection'],
  CreativeWork: ['author', 'dateModified', 'datePublished', 'headline', 'isAccessibleForFree', 'keywords', 'publisher'],
  Thing: ['description', 'image', 'mainEntityOfPage', 'name', 'url'],
};
const LIVE_BLOG_POSTING_PROPERTIES = new Set(Object.values(SCHEMA_ORG_PROPERTIES).flat());
const BLOG_POSTING_PROPERTIES = new Set([
  ...SCHEMA_ORG_PROPERTIES.Article,
  ...SCHEMA_ORG_PROPERTIES.CreativeWork,
  ...SCHEMA_ORG_PROPERTIES.Thing,
]);

/**
 * Google's documented requirements for a live blog (the "Live blog" rich result,
 * https://developers.google.com/search/docs/data-types/live-blogs): a LiveBlogPosting with
 * coverageStartTime, coverageEndTime (we give it once the coverage has ended: before, its end is not
 * known) and liveBlogUpdate, each update a BlogPosting with headline, datePublished and articleBody;
 * plus what Google's Article guide recommends for every article
 * (https://developers.google.com/search/docs/appearance/structured-data/article): headline, image,
 * datePublished, dateModified, author with a name.
 */
function expectGoogleLiveBlog(ld: Record<string, unknown>, ended: boolean): void {
  expect(ld['@context']).toBe('https://schema.org');
  expect(ld['@type']).toBe('LiveBlogPosting');
  for (const key of Object.keys(ld).filter((k) => !k.startsWith('@')))
    expect(LIVE_BLOG_POSTING_PROPERTIES, `schema.org LiveBlogPosting has ${key}`).toContain(key);
  for (const key of [
    'headline',
    'image',
    'datePublished',
    'dateModified',
    'coverageStartTime',
    'liveBlogUpdate',
    ...(ended ? ['coverageEndTime'] : []),
  ])
    expect(ld[key], `LiveBlogPosting.${key}`).toBeTruthy();
  expect((ld.author as { name?: string }).name).toBeTruthy();
  for (const time of ['datePublished', 'dateModified', 'coverageStartTime', ...(ended ? ['coverageEndTime'] : [])])
    expect(Number.isNaN(Date.parse(ld[time] as string)), `${time} is an ISO 8601 date`).toBe(false);
  const updates = ld.liveBlogUpdate as Record<string, unknown>[];
  expect(updates.length).toBeGreaterThan(0);
  for (const update of updates) {
    expect(update['@type']).toBe('BlogPosting');
    for (const key of Object.keys(update).filter((k) => !k.startsWith('@')))
      expect(BLOG_POSTING_PROPERTIES, `schema.org BlogPosting has ${key}`).toContain(key);
    for (const key of ['headline', 'datePublished', 'articleBody']) expect(update[key], `BlogPosting.${key}`).toBeTruthy();
    expect((update.headline as string).length).toBeLessThanOrEqual(110);
  }
}

/** An article page's JSON-LD object. */
function jsonLdOf(html: string): Record<string, unknown> {
  return JSON.parse(/<script type="application\/ld\+json">(.*?)<\/script>/s.exec(html)![1]!) as Record<string, unknown>;
}

/** A published article with its coverage started. */
async function liveArticle(title: string, keyPoints: string[] = []): Promise<Article> {
  const article = await createArticle(admin, { title, status: 'published', section: 'world' });
  const started = await admin.put(`/api/articles/${article.id}/live`, { status: 'live', keyPoints });
  expect(started.status, await started.clone().text()).toBe(200);
  return article;
}

async function post(client: TestClient, articleId: string, body: unknown): Promise<Response> {
  return client.post(`/api/articles/${articleId}/updates`, body);
}

async function addUser(username: string, role: Role): Promise<TestClient> {
  const password = `${username}-password-long`;
  const created = await admin.post('/api/users', { username, role, password });
  expect(created.status, await created.clone().text()).toBe(201);
  const client = new TestClient(server.url);
  await client.login(username, password);
  return client;
}

beforeAll(async () => {
  server = await startApiServer();
  admin = await adminClient(server);
  reader = new TestClient(server.url);
});

beforeEach(() => {
  onTestFailed(() => console.log(`--- server output (tail) ---\n${server.output().slice(-4000)}`));
});

afterAll(async () => {
  await server?.stop();
});

describe('live updates', () => {
  it('an update is a record of its own: sanitised, newest first, the article version unchanged, and an open editor saves without a 409', async () => {
    const article = await liveArticle('Storm makes landfall', ['Winds of 150 km/h', 'Coast evacuated']);
    // An editor opened the article at this version before any update was posted.
    const opened = article.version;
    const first = await post(admin, article.id, { bodyHtml: '<p>The storm reached the coast.</p><script>alert(1)</script>' });
    const firstUpdate = (await read<LiveUpdate>(first)).body;
    expect(first.status).toBe(201);
    expect(firstUpdate).toMatchObject({
      articleId: article.id,
      bodyHtml: '<p>The storm reached the coast.</p>',
      isBreaking: false,
      by: 'admin',
    });
    const second = await read<LiveUpdate>(
      await post(admin, article.id, {
        bodyHtml: 'Power is out in <b>40,000</b> homes.',
        isBreaking: true,
        image: '/brand/default-hero.png',
        imageAlt: 'A dark street',
      }),
    );
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({
      bodyHtml: 'Power is out in <strong>40,000</strong> homes.',
      isBreaking: true,
      imageAlt: 'A dark street',
    });

    const { body: state } = await read<LiveState>(await admin.get(`/api/articles/${article.id}/live`));
    expect(state.coverage).toMatchObject({ articleId: article.id, keyPoints: ['Winds of 150 km/h', 'Coast evacuated'] });
    expect(state.coverage!.endedAt).toBeUndefined();
    expect(state.updates.map((u) => u.id)).toEqual([second.body.id, firstUpdate.id]);
    const { body: listed } = await read<LiveUpdate[]>(await admin.get(`/api/articles/${article.id}/updates`));
    expect(listed.map((u) => u.id)).toEqual([second.body.id, firstUpdate.id]);

    const { body: now } = await read<Article>(await admin.get(`/api/articles/${article.id}`));
    expect(now.version).toBe(opened);
    const saved = await admin.request('PUT', `/api/articles/${article.id}`, {
      json: { dek: 'Saved from the open editor' },
      headers: { 'If-Match': `"${opened}"` },
    });
    expect(saved.status, await saved.clone().text()).toBe(200);
  });

  it('the page shows the key points and updates newest first, live.json carries them with a short cache, and the JSON-LD is a LiveBlogPosting', async () => {
    const article = await liveArticle('Election night', ['Polls closed at 22:00']);
    const older = (await read<LiveUpdate>(await post(admin, article.id, { bodyHtml: '<p>First results are in. Turnout is high.</p>' })))
      .body;
    const newer = (
      await read<LiveUpdate>(await post(admin, article.id, { bodyHtml: '<p>The count goes on overnight.</p>', isBreaking: true }))
    ).body;

    const html = await waitFor('the article page with both updates', async () => {
      const { text } = await fetchPath(`/article/${article.slug}`);
      return text.includes('The count goes on overnight.') && text.includes('First results are in.') && text;
    });
    expect(html).toContain('Polls closed at 22:00');
    expect(html.indexOf(`update-${newer.id}`)).toBeLessThan(html.indexOf(`update-${older.id}`));
    expect(html).toContain('data-live-status="live"');

    const feed = await waitFor('live.json with both updates', async () => {
      const { status, text, headers } = await fetchPath(`/article/${article.slug}/live.json`);
      return status === 200 && text.includes(newer.id) && text.includes(older.id) && { body: JSON.parse(text) as LiveFeed, headers };
    });
    expect(feed.headers.get('cache-control')).toBe('public, max-age=2');
    expect(feed.headers.get('content-type')).toMatch(/^application\/json/);
    expect(feed.body).toMatchObject({ status: 'live', keyPoints: ['Polls closed at 22:00'], total: 2 });
    expect(feed.body.updates.map((u) => u.id)).toEqual([newer.id, older.id]);
    expect(feed.body.updates[0]).toMatchObject({
      html: '<p>The count goes on overnight.</p>',
      text: 'The count goes on overnight.',
      isBreaking: true,
    });

    const ld = jsonLdOf(html);
    expectGoogleLiveBlog(ld, false);
    expect(ld.coverageEndTime).toBeUndefined();
    expect(ld.dateModified).toBe(newer.updatedAt);
    const updates = ld.liveBlogUpdate as Record<string, unknown>[];
    expect(updates).toEqual([
      expect.objectContaining({
        '@type': 'BlogPosting',
        headline: 'The count goes on overnight.',
        datePublished: newer.createdAt,
        articleBody: 'The count goes on overnight.',
      }),
      expect.objectContaining({
        '@type': 'BlogPosting',
        headline: 'First results are in.',
        datePublished: older.createdAt,
        articleBody: 'First results are in. Turnout is high.',
      }),
    ]);
  });

  it('an update changes the article’s item in the RSS feeds it is in, once (one guid), naming the newest update', async () => {
    const article = await liveArticle('Summit talks');
    await post(admin, article.id, { bodyHtml: '<p>Leaders agree on a joint statement.</p>' });
    for (const feedPath of ['/rss.xml', '/section/world/rss.xml']) {
      const rss = await waitFor(`${feedPath} with the update`, async () => {
        const { text } = await fetchPath(feedPath);
        return text.includes('Leaders agree on a joint statement.') && text;
      });
      expect(rss.split(`/article/${article.slug}</guid>`).length - 1).toBe(1);
      expect(rss).toMatch(/<description>Live: latest update at \d\d:\d\d UTC: Leaders agree on a joint statement\.<\/description>/);
    }
  });

  it('an update queues a constant number of files: the page, live.json and the feeds that list the article', async () => {
    const article = await liveArticle('Rescue under way');
    await waitForIdleQueue(server.url);
    await post(admin, article.id, { bodyHtml: '<p>Divers reached the cave.</p>' });
    const { body } = await read<{ publishing: { lastLivePages?: number } }>(await reader.get('/api/health'));
    // /article/{slug}, its live.json, /rss.xml and /section/world/rss.xml: nothing grows with the archive.
    expect(body.publishing.lastLivePages).toBe(4);
  });

  it('edit and delete: the page follows; unknown ids are 404; the audit log names each step', async () => {
    const article = await liveArticle('Bridge closed');
    const update = (await read<LiveUpdate>(await post(admin, article.id, { bodyHtml: '<p>The bridge is closed both ways.</p>' }))).body;
    const edited = await read<LiveUpdate>(
      await admin.put(`/api/articles/${article.id}/updates/${update.id}`, { bodyHtml: '<p>The bridge is closed northbound.</p>' }),
    );
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ id: update.id, createdAt: update.createdAt, bodyHtml: '<p>The bridge is closed northbound.</p>' });
    await waitFor('the edited update on the page', async () =>
      (await fetchPath(`/article/${article.slug}`)).text.includes('closed northbound'),
    );

    expect((await admin.delete(`/api/articles/${article.id}/updates/${update.id}`)).status).toBe(204);
    await waitFor('the page without the deleted update', async () => {
      const { text } = await fetchPath(`/article/${article.slug}`);
      return text.includes('The first update is on its way.') && !text.includes('closed northbound');
    });
    await expectError(await admin.delete(`/api/articles/${article.id}/updates/${update.id}`), 404);
    await expectError(await admin.put(`/api/articles/${article.id}/updates/nope`, { bodyHtml: '<p>x</p>' }), 404);
    await expectError(await post(admin, 'no-such-article', { bodyHtml: '<p>x</p>' }), 404);

    const { body: audit } = await read<{ items: AuditEntry[] }>(await admin.get('/api/audit?pageSize=100'));
    const mine = audit.items.filter((e) => e.target.id === article.id).map((e) => e.action);
    expect(mine).toEqual(expect.arrayContaining(['live.start', 'live.update.create', 'live.update.edit', 'live.update.delete']));
  });

  it('bad input is a 400 in the one error shape; updates need running coverage (409 before the start and after the end)', async () => {
    const article = await createArticle(admin, { title: 'Quiet day', status: 'published' });
    await expectError(await post(admin, article.id, { bodyHtml: '<p>Too early.</p>' }), 409, /not live/);
    await expectError(await admin.put(`/api/articles/${article.id}/live`, { status: 'ended' }), 409, /not live/);
    await admin.put(`/api/articles/${article.id}/live`, { status: 'live' });
    const empty = await expectError(await post(admin, article.id, { bodyHtml: '   ' }), 400);
    expect(empty.issues?.[0]?.path).toEqual(['bodyHtml']);
    await expectError(await post(admin, article.id, { bodyHtml: '<script>only</script>' }), 400, /needs text/);
    await expectError(await post(admin, article.id, { bodyHtml: '<p>x</p>', image: 'javascript:alert(1)' }), 400);
    await expectError(await post(admin, article.id, { bodyHtml: '<p>x</p>', extra: true }), 400);
    await expectError(await admin.put(`/api/articles/${article.id}/live`, { status: 'paused' }), 400);
    await expectError(
      await admin.put(`/api/articles/${article.id}/live`, { keyPoints: Array.from({ length: 11 }, (_, i) => `Point ${i}`) }),
      400,
    );
    await expectError(await admin.put(`/api/articles/${article.id}/live`, {}), 400);

    const ended = await read<LiveCoverage>(await admin.put(`/api/articles/${article.id}/live`, { status: 'ended' }));
    expect(ended.body.endedAt).toEqual(expect.any(String));
    await expectError(await post(admin, article.id, { bodyHtml: '<p>Too late.</p>' }), 409, /ended/);
  });

  it('ending the coverage freezes the page: live.json says ended, the page has no island and the JSON-LD has coverageEndTime', async () => {
    const article = await liveArticle('Match day');
    await post(admin, article.id, { bodyHtml: '<p>Kick-off.</p>' });
    const ended = (await read<LiveCoverage>(await admin.put(`/api/articles/${article.id}/live`, { status: 'ended' }))).body;
    const feed = await waitFor('live.json saying ended', async () => {
      const { status, text } = await fetchPath(`/article/${article.slug}/live.json`);
      return status === 200 && (JSON.parse(text) as LiveFeed).status === 'ended' && (JSON.parse(text) as LiveFeed);
    });
    expect(feed.endedAt).toBe(ended.endedAt);
    const html = await waitFor('the ended page', async () => {
      const { text } = await fetchPath(`/article/${article.slug}`);
      return text.includes('data-live-status="ended"') && text;
    });
    expect(html).not.toContain('LiveArrivals');
    expect(html).toContain('Kick-off.');
    expect(jsonLdOf(html)).toMatchObject({ '@type': 'LiveBlogPosting', coverageEndTime: ended.endedAt });
    expectGoogleLiveBlog(jsonLdOf(html), true);
  });

  it('unpublishing removes live.json with the page; publishing again brings both back', async () => {
    const article = await liveArticle('Strike talks');
    await post(admin, article.id, { bodyHtml: '<p>Talks resume at noon.</p>' });
    await waitFor('live.json', async () => (await fetchPath(`/article/${article.slug}/live.json`)).status === 200);
    await admin.put(`/api/articles/${article.id}`, { status: 'draft' });
    await waitFor('live.json removed', async () => (await fetchPath(`/article/${article.slug}/live.json`)).status === 404);
    expect((await fetchPath(`/article/${article.slug}`)).status).toBe(404);
    await admin.put(`/api/articles/${article.id}`, { status: 'published' });
    await waitFor('live.json back', async () => (await fetchPath(`/article/${article.slug}/live.json`)).status === 200);
  });
});

describe('live coverage roles', () => {
  it('anonymous readers get 401; a contributor 403; an author only on their own article; an editor anywhere', async () => {
    const article = await liveArticle('Roles under pressure');
    await expectError(await post(reader, article.id, { bodyHtml: '<p>x</p>' }), 401);
    await expectError(await reader.get(`/api/articles/${article.id}/live`), 401);

    const contributor = await addUser('live-contributor', 'contributor');
    await expectError(await post(contributor, article.id, { bodyHtml: '<p>x</p>' }), 403);
    await expectError(await contributor.put(`/api/articles/${article.id}/live`, { status: 'ended' }), 403);

    const author = await addUser('live-author', 'author');
    await expectError(await post(author, article.id, { bodyHtml: '<p>x</p>' }), 403);
    const own = await read<Article>(
      await author.post('/api/articles', { title: 'The author’s own live story', bodyHtml: '<p>Body.</p>', status: 'published' }),
    );
    expect(own.status).toBe(201);
    expect((await author.put(`/api/articles/${own.body.id}/live`, { status: 'live' })).status).toBe(200);
    expect((await post(author, own.body.id, { bodyHtml: '<p>From the author.</p>' })).status).toBe(201);

    const editor = await addUser('live-editor', 'editor');
    const update = await read<LiveUpdate>(await post(editor, article.id, { bodyHtml: '<p>From the editor.</p>' }));
    expect(update.status).toBe(201);
    await expectError(await author.delete(`/api/articles/${article.id}/updates/${update.body.id}`), 403);
    expect((await editor.delete(`/api/articles/${article.id}/updates/${update.body.id}`)).status).toBe(204);
  });
});
