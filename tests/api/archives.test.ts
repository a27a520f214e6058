/**
 * Tag and author archives, related reading and tag curation (issue 35) on the real built server, on
 * the configured store (TEST_STORE=pg for PostgreSQL): the served pages and feeds list exactly the
 * right articles through publish, unpublish, retag, delete and merge; a merged tag answers 301; a
 * hidden tag has no page and no link; related reading never links a page that is not served.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import type { Article } from '../../src/schemas/article.ts';
import type { TagList } from '../../src/schemas/taxonomy.ts';
import { adminClient, createArticle, expectError, read, startApiServer, waitForIdleQueue, type TestClient } from './support.ts';

async function fetchText(server: TestServer, publicPath: string): Promise<{ status: number; text: string; headers: Headers }> {
  const response = await fetch(new URL(publicPath, server.url), { redirect: 'manual' });
  return { status: response.status, text: await response.text(), headers: response.headers };
}

/** The article slugs a listing page's cards or a feed's items link, in order. */
function linkedSlugs(text: string): string[] {
  const slugs = [...text.matchAll(/\/article\/([a-z0-9-]+)/g)].map((m) => m[1]!);
  return [...new Set(slugs)];
}

/** The slugs a page's related reading links (the cards of its "Related reading" section). */
function relatedSlugs(html: string): string[] {
  const section = /<section[^>]*data-testid="related-reading"[\s\S]*?<\/section>/.exec(html)?.[0] ?? '';
  return linkedSlugs(section);
}

describe('tag and author archives', () => {
  let server: TestServer;
  let admin: TestClient;

  /** Waits for the queue to drain, then answers what is served at the path. */
  const settled = async (publicPath: string) => {
    await waitForIdleQueue(server.url);
    return fetchText(server, publicPath);
  };
  const publish = (input: Parameters<typeof createArticle>[1]) => createArticle(admin, { status: 'published', ...input });

  beforeAll(async () => {
    server = await startApiServer();
    admin = await adminClient(server);
  });

  beforeEach(() => {
    onTestFailed(() => console.log(`--- server output (tail) ---\n${server.output().slice(-6000)}`));
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('lists exactly the published articles of a tag and an author, whatever the spelling, through publish, unpublish, retag and delete', async () => {
    const first = await publish({
      title: 'Tidal barrier plan approved',
      tags: ['Coastal Defence', 'Budget'],
      authorName: 'Inés Ortega',
      section: 'politics',
    });
    const second = await publish({
      title: 'Sea wall costs rise',
      tags: ['coastal defence'],
      authorName: 'ines ortega',
      section: 'business',
    });
    const draft = await createArticle(admin, { title: 'Unpublished sea wall memo', tags: ['Coastal-Defence'], authorName: 'Inés Ortega' });

    const tag = await settled('/tag/coastal-defence');
    expect(tag.status).toBe(200);
    expect(linkedSlugs(tag.text)).toEqual([second.slug, first.slug]);
    expect(tag.text).toMatch(/<h1[^>]*>coastal defence<\/h1>/);
    expect(tag.text).toContain('2 articles');
    expect(tag.text).toMatch(/<link rel="canonical" href="[^"]*\/tag\/coastal-defence"/);
    expect(tag.text).toContain('property="og:image:alt"');
    expect(tag.text).toContain('name="twitter:image:alt"');
    expect(tag.text).toContain('<meta property="og:locale" content="en_US"');
    expect(tag.text).not.toContain(draft.slug);

    const author = await fetchText(server, '/author/ines-ortega');
    expect(author.status).toBe(200);
    expect(linkedSlugs(author.text)).toEqual([second.slug, first.slug]);

    const feed = await fetchText(server, '/tag/coastal-defence/rss.xml');
    expect(feed.status).toBe(200);
    expect(linkedSlugs(feed.text)).toEqual([second.slug, first.slug]);
    expect(feed.text).toMatch(/<atom:link href="[^"]*\/tag\/coastal-defence\/rss\.xml"/);
    expect(linkedSlugs((await fetchText(server, '/author/ines-ortega/rss.xml')).text)).toEqual([second.slug, first.slug]);

    const sitemap = await fetchText(server, '/sitemaps/archives.xml');
    expect(sitemap.text).toMatch(/\/tag\/coastal-defence<\/loc>/);
    expect(sitemap.text).toMatch(/\/author\/ines-ortega<\/loc>/);
    expect((await fetchText(server, '/sitemap.xml')).text).toContain('/sitemaps/archives.xml');

    // The article links its tags and its author.
    const page = await fetchText(server, `/article/${first.slug}`);
    expect(page.text).toContain('href="/tag/coastal-defence"');
    expect(page.text).toContain('href="/tag/budget"');
    expect(page.text).toContain('href="/author/ines-ortega"');
    expect(page.text).toMatch(/<meta name="twitter:image:alt" content="Tidal barrier plan approved"/);

    // Unpublish: the tag, the author and their feeds drop it.
    expect((await admin.put(`/api/articles/${second.id}`, { status: 'draft' })).status).toBe(200);
    expect(linkedSlugs((await settled('/tag/coastal-defence')).text)).toEqual([first.slug]);
    expect(linkedSlugs((await fetchText(server, '/tag/coastal-defence/rss.xml')).text)).toEqual([first.slug]);
    expect(linkedSlugs((await fetchText(server, '/author/ines-ortega')).text)).toEqual([first.slug]);

    // Retag: it leaves one tag's page and joins another's.
    expect((await admin.put(`/api/articles/${first.id}`, { tags: ['Flood Risk'] })).status).toBe(200);
    expect((await settled('/tag/coastal-defence')).status).toBe(404);
    expect((await fetchText(server, '/tag/coastal-defence/rss.xml')).status).toBe(404);
    expect(linkedSlugs((await fetchText(server, '/tag/flood-risk')).text)).toEqual([first.slug]);
    expect((await fetchText(server, '/sitemaps/archives.xml')).text).not.toContain('/tag/coastal-defence<');

    // Delete: an author with no published article has no page.
    expect((await admin.delete(`/api/articles/${first.id}`)).status).toBe(204);
    expect((await settled('/author/ines-ortega')).status).toBe(404);
    expect((await fetchText(server, '/tag/flood-risk')).status).toBe(404);
    expect((await fetchText(server, '/sitemaps/archives.xml')).text).not.toContain('/author/ines-ortega<');
  });

  it('pages a tag like a section: page 1 holds the newest 12, archive files the rest from the oldest', async () => {
    const made: Article[] = [];
    for (let i = 1; i <= 14; i++) made.push(await publish({ title: `Rail strike day ${i}`, tags: ['Rail Strike'], section: 'world' }));
    const first = await settled('/tag/rail-strike');
    expect(linkedSlugs(first.text)).toEqual(
      made
        .slice(2)
        .reverse()
        .map((a) => a.slug),
    );
    expect(first.text).toContain('14 articles');
    const archive = await fetchText(server, '/tag/rail-strike/page/2');
    expect(archive.status).toBe(200);
    expect(linkedSlugs(archive.text)).toEqual([made[1]!.slug, made[0]!.slug]);
    expect(JSON.parse((await fetchText(server, '/tag/rail-strike/pages.json')).text)).toEqual({ pages: 2 });
    expect((await fetchText(server, '/tag/rail-strike/page/3')).status).toBe(404);
  });

  it('merges a tag into another: articles retagged, the old page and feed answer 301, the merge is audited', async () => {
    const a = await publish({ title: 'Heat wave grips the capital', tags: ['Heat Wave'] });
    const b = await publish({ title: 'Heatwave warning extended', tags: ['Heatwave'] });
    await waitForIdleQueue(server.url);
    const { status, body } = await read<{ retagged: number }>(await admin.post('/api/tags/merge', { from: 'heat-wave', into: 'heatwave' }));
    expect(status).toBe(200);
    expect(body.retagged).toBe(1);
    await waitForIdleQueue(server.url);
    const old = await fetchText(server, '/tag/heat-wave');
    expect(old.status).toBe(301);
    expect(old.headers.get('location')).toBe('/tag/heatwave');
    const oldFeed = await fetchText(server, '/tag/heat-wave/rss.xml');
    expect(oldFeed.status).toBe(301);
    expect(oldFeed.headers.get('location')).toBe('/tag/heatwave/rss.xml');
    expect(linkedSlugs((await fetchText(server, '/tag/heatwave')).text)).toEqual([b.slug, a.slug]);
    const article = (await read<Article>(await admin.get(`/api/articles/${a.id}`))).body;
    expect(article.tags).toEqual(['Heatwave']);
    expect((await fetchText(server, `/article/${a.slug}`)).text).toContain('href="/tag/heatwave"');
    const tags = (await read<TagList>(await admin.get('/api/tags'))).body;
    expect(tags.merged).toEqual([expect.objectContaining({ from: 'heat-wave', into: 'heatwave' })]);
    const audit = (await read<{ items: Array<{ action: string; target: { id: string } }> }>(await admin.get('/api/audit'))).body;
    expect(audit.items.some((e) => e.action === 'tag.merge' && e.target.id === 'heat-wave')).toBe(true);
    await expectError(await admin.post('/api/tags/merge', { from: 'heatwave', into: 'heatwave' }), 400);
    await expectError(await admin.post('/api/tags/merge', { from: 'Not A Slug', into: 'heatwave' }), 400);
  });

  it('hides a junk tag (no page, no link, not in the sitemap) and shows it again', async () => {
    const article = await publish({ title: 'Markets open flat', tags: ['Markets', 'feed-junk-123'] });
    expect((await settled('/tag/feed-junk-123')).status).toBe(200);
    const hidden = await read<{ hidden: boolean }>(await admin.put('/api/tags/feed-junk-123', { hidden: true }));
    expect(hidden).toEqual({ status: 200, body: { slug: 'feed-junk-123', hidden: true } });
    expect((await settled('/tag/feed-junk-123')).status).toBe(404);
    const page = (await fetchText(server, `/article/${article.slug}`)).text;
    expect(page).not.toContain('href="/tag/feed-junk-123"');
    expect(page).toContain('href="/tag/markets"');
    expect((await fetchText(server, '/sitemaps/archives.xml')).text).not.toContain('/tag/feed-junk-123<');
    const listed = (await read<TagList>(await admin.get('/api/tags'))).body.tags.find((t) => t.slug === 'feed-junk-123');
    expect(listed).toMatchObject({ hidden: true, count: 1 });

    expect((await admin.put('/api/tags/feed-junk-123', { hidden: false })).status).toBe(200);
    expect((await settled('/tag/feed-junk-123')).status).toBe(200);
    expect((await fetchText(server, `/article/${article.slug}`)).text).toContain('href="/tag/feed-junk-123"');
    await expectError(await admin.put('/api/tags/feed-junk-123', { hidden: 'yes' }), 400);
  });

  it('shows related reading by shared tags and never links a page that is not served', async () => {
    const older = await publish({ title: 'Glacier survey begins', tags: ['Glaciers', 'Alps'], section: 'world' });
    const middle = await publish({ title: 'Alpine huts close early', tags: ['Alps'], section: 'world' });
    const newest = await publish({ title: 'Glaciers lose record mass in the Alps', tags: ['Glaciers', 'Alps'], section: 'world' });
    await waitForIdleQueue(server.url);
    const related = relatedSlugs((await fetchText(server, `/article/${newest.slug}`)).text);
    expect(related[0]).toBe(older.slug);
    expect(related).toContain(middle.slug);
    expect(related).not.toContain(newest.slug);
    expect(related.length).toBeLessThanOrEqual(4);

    // Unpublish one it shows: the page is written again without it.
    expect((await admin.put(`/api/articles/${older.id}`, { status: 'draft' })).status).toBe(200);
    await waitForIdleQueue(server.url);
    expect(relatedSlugs((await fetchText(server, `/article/${newest.slug}`)).text)).not.toContain(older.slug);
    // Delete another: the same.
    expect((await admin.delete(`/api/articles/${middle.id}`)).status).toBe(204);
    await waitForIdleQueue(server.url);
    expect(relatedSlugs((await fetchText(server, `/article/${newest.slug}`)).text)).not.toContain(middle.slug);

    // Every related link of every served article leads to a served article.
    const listed = (await read<Article[]>(await admin.get('/api/articles?status=published&pageSize=100'))).body;
    for (const article of listed) {
      const page = await fetchText(server, `/article/${article.slug}`);
      expect(page.status).toBe(200);
      for (const slug of relatedSlugs(page.text))
        expect((await fetchText(server, `/article/${slug}`)).status, `${article.slug} -> ${slug}`).toBe(200);
    }
  });
});
