/** POST /api/news-sources/{id}/fetch and the feed scheduler, on the real built server against a local feed server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Article } from '../../src/schemas/article.ts';
import type { NewsSource } from '../../src/schemas/source.ts';
import { ApiClient, startServer, type TestServer } from '../helpers/server.ts';
import { readFixture, sendWithValidators, startFeedServer, type FeedServer } from '../fixtures/feeds/feed-server.ts';
import { waitFor } from './support.ts';

let feeds: FeedServer;
let server: TestServer;
let api: ApiClient;
let counter = 0;

beforeAll(async () => {
  feeds = await startFeedServer();
  server = await startServer();
  api = new ApiClient(server.url);
  await api.login();
});

afterAll(async () => {
  await server?.stop();
  await feeds?.close();
});

/** Adds a source with a unique name (the name is the articles' sourceLabel, used to find them). */
async function addSource(path: string, extra: Partial<NewsSource> = {}): Promise<NewsSource> {
  const name = `Source ${++counter} ${path.split('/').pop()}`;
  const response = await api.post('/api/news-sources', { name, url: `${feeds.url}${path}`, section: 'tech', ...extra });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as NewsSource;
}

async function fetchNow(
  source: NewsSource,
): Promise<{ status: number; body: { message?: string; error?: string }; retryAfter: string | null }> {
  const response = await api.post(`/api/news-sources/${source.id}/fetch`);
  return {
    status: response.status,
    body: (await response.json()) as { message?: string; error?: string },
    retryAfter: response.headers.get('retry-after'),
  };
}

async function articlesOf(source: NewsSource): Promise<Article[]> {
  const response = await api.get(`/api/articles?pageSize=100&source=${encodeURIComponent(source.name)}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as Article[]).filter((a) => a.sourceLabel === source.name);
}

async function sourceNow(source: NewsSource): Promise<NewsSource> {
  const list = (await (await api.get('/api/news-sources')).json()) as NewsSource[];
  return list.find((s) => s.id === source.id)!;
}

describe('fetch-now', () => {
  it('fetches an RSS 2.0 feed into published articles, and a second full fetch creates no duplicates', async () => {
    // No validators on this route: both fetches download and parse the whole feed.
    feeds.route('/plain/rss2sample.xml', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/rss+xml' });
      res.end(readFixture('rss2sample.xml'));
    });
    const source = await addSource('/plain/rss2sample.xml');
    const first = await fetchNow(source);
    expect(first).toMatchObject({ status: 200, body: { message: 'Fetched 4 items, 4 new' } });
    const articles = await articlesOf(source);
    expect(articles).toHaveLength(4);
    const star = articles.find((a) => a.title === 'Star City')!;
    expect(star).toMatchObject({
      status: 'published',
      section: 'tech',
      sourceLabel: source.name,
      sourceUrl: 'http://liftoff.msfc.nasa.gov/news/2003/news-starcity.asp',
      publishedAt: '2003-06-03T09:39:21.000Z',
      slug: 'star-city',
      authorName: 'Writer',
    });
    expect(star.bodyHtml).toContain('Star City</a>');
    expect(star).not.toHaveProperty('origin');
    // Anonymous readers see them too: they are published.
    const anonymous = await new ApiClient(server.url).get(`/api/articles/by-slug/${star.slug}`);
    expect(anonymous.status).toBe(200);

    const second = await fetchNow(source);
    expect(second).toMatchObject({ status: 200, body: { message: 'Fetched 4 items, 0 new' } });
    const again = await articlesOf(source);
    expect(again.map((a) => a.id).sort()).toEqual(articles.map((a) => a.id).sort());

    const updated = await sourceNow(source);
    expect(updated.lastFetchedAt).toBeDefined();
    expect(updated.lastError).toBeUndefined();
  });

  it('skips items whose link another source already brought in (canonical link across sources)', async () => {
    // The same four stories as the previous test's source, from another URL.
    const other = await addSource('/feeds/rss2sample.xml');
    expect((await fetchNow(other)).body.message).toBe('Fetched 4 items, 0 new');
    expect(await articlesOf(other)).toHaveLength(0);
  });

  it('sends If-None-Match / If-Modified-Since and parses nothing on 304', async () => {
    const source = await addSource('/feeds/tpm.atom');
    expect((await fetchNow(source)).body.message).toBe('Fetched 20 items, 20 new');
    const stored = await sourceNow(source);
    expect(stored.etag).toMatch(/^"[0-9a-f]+"$/);
    expect(stored.lastModified).toBe('Tue, 10 Jun 2003 04:00:00 GMT');
    const second = await fetchNow(source);
    expect(second).toMatchObject({ status: 200, body: { message: 'Feed not modified' } });
    const last = feeds.requests.filter((r) => r.path === '/feeds/tpm.atom').at(-1)!;
    expect(last.headers['if-none-match']).toBe(stored.etag);
    expect(last.headers['if-modified-since']).toBe(stored.lastModified);
    expect(last.status).toBe(304);
    expect(last.headers['user-agent']).toMatch(/^MeridianNews\//);
    expect(await articlesOf(source)).toHaveLength(20);
  });

  it('reads Atom with xml:base, RSS 1.0 (RDF), a windows-1251 feed, media:content and a gzip-encoded feed', async () => {
    const fetched = new Map<string, NewsSource>();
    for (const [path, message] of [
      ['/feeds/intertwingly.atom', 'Fetched 20 items, 20 new'],
      ['/feeds/rss1-spec-example.rdf', 'Fetched 2 items, 2 new'],
      ['/feeds/iconv.xml', 'Fetched 10 items, 10 new'],
      ['/feeds/mediacontent-dupes.xml', 'Fetched 1 item, 1 new'],
      // compressed.xml is iconv.xml, served with Content-Encoding: gzip: same links, so nothing new.
      ['/feeds/compressed.xml', 'Fetched 10 items, 0 new'],
    ] as const) {
      const source = await addSource(path);
      fetched.set(path, source);
      expect((await fetchNow(source)).body.message, path).toBe(message);
    }
    const iconv = await articlesOf(fetched.get('/feeds/iconv.xml')!);
    expect(iconv.map((a) => a.title)).toContain('В Бузулуке главные стройплощадки – детсад и Ледовый дворец');
    const [dahlia] = await articlesOf(fetched.get('/feeds/mediacontent-dupes.xml')!);
    expect(dahlia!.heroImage).toBe('http://i.mol.im/i/pix/2013/02/03/article-2272640-174FCEE2000005DC-697_154x115.jpg');
    const atom = await articlesOf(fetched.get('/feeds/intertwingly.atom')!);
    expect(atom.find((a) => a.title === 'Inhibiting Suspend')!.sourceUrl).toBe(`${feeds.url}/blog/2012/07/16/Inhibiting-Suspend`);
  });

  it('updates the article (same id and slug) when an item is retitled upstream', async () => {
    let title = 'Council approves the new bridge';
    const feed = () =>
      Buffer.from(`<?xml version="1.0"?><rss version="2.0"><channel><title>Local</title><link>${feeds.url}/</link>
        <item><title>${title}</title><link>${feeds.url}/news/bridge</link><guid>bridge-1</guid><description>The vote was 7 to 2.</description><pubDate>Mon, 06 Jan 2025 10:00:00 GMT</pubDate></item>
        <item><title>Unchanged story</title><link>${feeds.url}/news/other</link><description>Nothing new.</description></item>
      </channel></rss>`);
    feeds.route('/feeds/editable.xml', (req, res) =>
      sendWithValidators(req, res, feed(), { 'Content-Type': 'application/rss+xml' }, new Date(Date.now() - 1000).toUTCString()),
    );
    const source = await addSource('/feeds/editable.xml');
    expect((await fetchNow(source)).body.message).toBe('Fetched 2 items, 2 new');
    const [before] = (await articlesOf(source)).filter((a) => a.title === title);
    title = 'Council approves the new bridge after long debate';
    expect((await fetchNow(source)).body.message).toBe('Fetched 2 items, 0 new, 1 updated');
    const after = await articlesOf(source);
    expect(after).toHaveLength(2);
    const bridge = after.find((a) => a.id === before!.id)!;
    expect(bridge.title).toBe(title);
    expect(bridge.slug).toBe(before!.slug);
    expect(bridge.publishedAt).toBe('2025-01-06T10:00:00.000Z');
    // An editor's unpublish sticks: the next fetch neither republishes nor duplicates it.
    expect((await api.put(`/api/articles/${bridge.id}`, { status: 'archived' })).status).toBe(200);
    feeds.route('/feeds/editable.xml', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/rss+xml' });
      res.end(feed());
    });
    expect((await fetchNow(source)).body.message).toBe('Fetched 2 items, 0 new');
    const archived = (await articlesOf(source)).find((a) => a.id === bridge.id)!;
    expect(archived.status).toBe('archived');
  });

  it('never stores XSS payloads from feed items', async () => {
    const payload = `<p>Intro</p><script>alert(1)</script><img src="x" onerror="alert(2)"><a href="javascript:alert(3)">x</a><iframe src="https://evil.test"></iframe><p onclick="alert(4)" style="color:red">Body</p>`;
    feeds.route('/feeds/xss.xml', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/rss+xml' });
      res.end(`<?xml version="1.0"?><rss version="2.0"><channel><title>x</title><link>${feeds.url}/</link>
        <item><title>XSS &lt;img src=x onerror=alert(5)&gt;</title><link>${feeds.url}/xss/1</link><description><![CDATA[${payload}]]></description>
        <author>&lt;script&gt;alert(6)&lt;/script&gt;Eve</author></item></channel></rss>`);
    });
    const source = await addSource('/feeds/xss.xml');
    expect((await fetchNow(source)).status).toBe(200);
    const [article] = await articlesOf(source);
    expect(article!.bodyHtml).toContain('<p>Intro</p>');
    expect(article!.bodyHtml).toContain('<p>Body</p>');
    expect(article!.bodyHtml).not.toMatch(/<script|onerror|onclick|javascript:|<iframe|style=/i);
    expect(article!.title).not.toContain('<');
    expect(article!.authorName).not.toContain('<');
  });

  it('keeps a clear error on the source for a non-feed, a broken server and a blocked redirect (502)', async () => {
    const html = await addSource('/feeds/notafeed.html');
    const result = await fetchNow(html);
    expect(result).toMatchObject({ status: 502, body: { error: 'The URL answered with an HTML page, not an RSS or Atom feed' } });
    expect((await sourceNow(html)).lastError).toBe('The URL answered with an HTML page, not an RSS or Atom feed');

    const missing = await addSource('/feeds/does-not-exist.xml');
    expect(await fetchNow(missing)).toMatchObject({ status: 502, body: { error: 'The feed server answered HTTP 404' } });
    expect((await sourceNow(missing)).lastError).toBe('The feed server answered HTTP 404');

    feeds.route('/feeds/redirect-to-file.xml', (_req, res) => {
      res.writeHead(302, { Location: 'file:///etc/passwd' });
      res.end();
    });
    const redirect = await addSource('/feeds/redirect-to-file.xml');
    const refused = await fetchNow(redirect);
    expect(refused.status).toBe(502);
    expect(refused.body.error).toMatch(/Only http and https URLs/);

    // The error clears on the next successful fetch.
    feeds.route('/feeds/does-not-exist.xml', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/rss+xml' });
      res.end(readFixture('saxerror.xml'));
    });
    expect((await fetchNow(missing)).body.message).toBe('Fetched 3 items, 3 new');
    expect((await sourceNow(missing)).lastError).toBeUndefined();
  });

  it('respects 429 with Retry-After: stored on the source, and fetch-now answers 429 until then', async () => {
    let calls = 0;
    feeds.route('/feeds/busy.xml', (_req, res) => {
      calls++;
      res.writeHead(429, { 'Retry-After': '3600' });
      res.end('slow down');
    });
    const source = await addSource('/feeds/busy.xml');
    const first = await fetchNow(source);
    expect(first.status).toBe(429);
    expect(Number(first.retryAfter)).toBeGreaterThan(3500);
    const stored = await sourceNow(source);
    expect(Date.parse(stored.retryAfter!) - Date.now()).toBeGreaterThan(3500_000);
    expect(stored.lastError).toMatch(/answered 429/);
    const second = await fetchNow(source);
    expect(second.status).toBe(429);
    expect(Number(second.retryAfter)).toBeGreaterThan(3500);
    expect(calls).toBe(1);
  });

  it('answers 404 for an unknown source, 400 for api and disabled sources, 401 without a session', async () => {
    expect((await api.post('/api/news-sources/00000000-0000-4000-8000-000000000000/fetch')).status).toBe(404);
    const apiSource = await addSource('/feeds/rss2sample.xml?api', { type: 'api' });
    expect((await fetchNow(apiSource)).status).toBe(400);
    const disabled = await addSource('/feeds/rss2sample.xml?disabled', { enabled: false });
    expect((await fetchNow(disabled)).status).toBe(400);
    const anonymous = new ApiClient(server.url);
    expect((await anonymous.post(`/api/news-sources/${disabled.id}/fetch`)).status).toBe(401);
  });
});

describe('the feed scheduler', () => {
  it('fetches enabled RSS sources on its own, one fetch per source at a time, skipping disabled and api ones', async () => {
    const local = await startFeedServer();
    const fast = await startServer({ env: { FEED_FETCH_INTERVAL_MINUTES: '0.02' } });
    try {
      const client = new ApiClient(fast.url);
      await client.login();
      // A slow feed: each answer takes longer than the interval, so overlapping fetches would show.
      let slowInFlight = 0;
      local.route('/slow.xml', async (req, res) => {
        slowInFlight++;
        await new Promise((resolve) => setTimeout(resolve, 1500));
        slowInFlight--;
        res.writeHead(200, { 'Content-Type': 'application/rss+xml' });
        res.end(readFixture('rss2sample.xml'));
      });
      const add = async (body: Record<string, unknown>) =>
        (await (await client.post('/api/news-sources', { section: 'world', ...body })).json()) as NewsSource;
      const enabled = await add({ name: 'Slow', url: `${local.url}/slow.xml` });
      await add({ name: 'Off', url: `${local.url}/off.xml`, enabled: false });
      await add({ name: 'Api', url: `${local.url}/api.xml`, type: 'api' });
      // Fetch-now while the scheduler is fetching: it joins, never doubles.
      await waitFor('a scheduled fetch of the slow feed under way', async () => slowInFlight > 0, 15_000);
      const joined = await client.post(`/api/news-sources/${enabled.id}/fetch`);
      expect([200, 429]).toContain(joined.status);
      await expect
        .poll(async () => local.requests.filter((r) => r.path === '/slow.xml').length, { timeout: 15_000, interval: 250 })
        .toBeGreaterThanOrEqual(3);
      expect(local.maxConcurrent('/slow.xml')).toBe(1);
      expect(local.requests.some((r) => r.path === '/off.xml' || r.path === '/api.xml')).toBe(false);
      const articles = (await (await client.get('/api/articles?pageSize=100')).json()) as Article[];
      expect(articles.filter((a) => a.sourceLabel === 'Slow')).toHaveLength(4);
    } finally {
      await fast.stop();
      await local.close();
    }
  }, 40_000);
});
