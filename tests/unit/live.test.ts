/**
 * Live coverage (issue 35) below the HTTP edge: the store's live repository on either store
 * (TEST_STORE=pg for PostgreSQL), the files a live write queues (a constant number, whatever the
 * archive's size), the paths and files of live.json, the RSS item of a live article, and the pure helpers.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.ts';
import type { ArticleRecord } from '../../src/schemas/article.ts';
import type { LiveCoverage, LiveUpdate } from '../../src/schemas/live.ts';
import { fileForPath, isRegenerablePath, listPublicPaths, listRenderedPaths } from '../../src/server/publishing/paths.ts';
import { computeAffectedPaths, computeLivePaths } from '../../src/server/publishing/affected-paths.ts';
import { buildRss } from '../../src/server/publishing/feeds.ts';
import { loadLiveFeed } from '../../src/server/live-feed.ts';
import { headlineOf, liveJsonLd, newUpdatesLabel, readLiveFeed, unseenUpdates } from '../../src/lib/live-blog.ts';
import { textToUpdateHtml } from '../../src/islands/editor/live-text.ts';
import { parseConfig } from '../../src/config.ts';
import { createPageLane } from '../../src/server/publishing/page-lane.ts';
import { createRegenerator, type Renderer } from '../../src/server/publishing/regenerator.ts';
import { articleRecord, makeRuntime, makeTempDir } from './support.ts';

const opened: Store[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

async function freshStore(): Promise<{ store: Store; dataDir: string }> {
  const runtime = await makeRuntime();
  opened.push(runtime.store);
  return { store: runtime.store, dataDir: runtime.dataDir };
}

let clock = Date.parse('2026-03-01T08:00:00Z');
const tick = () => new Date((clock += 60_000)).toISOString();

function coverage(articleId: string, overrides: Partial<LiveCoverage> = {}): LiveCoverage {
  const at = tick();
  return { articleId, startedAt: at, keyPoints: [], updatedAt: at, ...overrides };
}

function update(articleId: string, id: string, overrides: Partial<LiveUpdate> = {}): LiveUpdate {
  const at = tick();
  return { id, articleId, bodyHtml: `<p>Update ${id}.</p>`, isBreaking: false, createdAt: at, updatedAt: at, ...overrides };
}

function published(slug: string, overrides: Partial<ArticleRecord> = {}): ArticleRecord {
  const at = tick();
  return articleRecord({ id: slug, slug, title: `Title of ${slug}`, createdAt: at, updatedAt: at, publishedAt: at, ...overrides });
}

describe('the live repository', () => {
  it('keeps coverage and updates per article, newest first, and forgets an article whole', async () => {
    const { store } = await freshStore();
    expect(await store.live.getCoverage('a')).toBeUndefined();
    expect(await store.live.listUpdates('a')).toEqual([]);
    await store.live.putCoverage(coverage('a', { keyPoints: ['One'] }));
    const first = update('a', 'u1');
    const second = update('a', 'u2');
    await store.live.putUpdate(first);
    await store.live.putUpdate(second);
    await store.live.putUpdate(update('b', 'u3'));
    expect((await store.live.listUpdates('a')).map((u) => u.id)).toEqual(['u2', 'u1']);
    expect(await store.live.getUpdate('a', 'u1')).toEqual(first);
    expect(await store.live.getUpdate('b', 'u1')).toBeUndefined();

    const edited = { ...first, bodyHtml: '<p>Edited.</p>', updatedAt: tick() };
    await store.live.putUpdate(edited);
    expect((await store.live.listUpdates('a')).map((u) => u.bodyHtml)).toEqual(['<p>Update u2.</p>', '<p>Edited.</p>']);
    expect(await store.live.deleteUpdate('a', 'u2')).toBe(true);
    expect(await store.live.deleteUpdate('a', 'u2')).toBe(false);
    expect((await store.live.listCoverage()).map((c) => c.articleId)).toEqual(['a']);

    await store.live.deleteForArticle('a');
    expect(await store.live.getCoverage('a')).toBeUndefined();
    expect(await store.live.listUpdates('a')).toEqual([]);
    expect((await store.live.listUpdates('b')).map((u) => u.id)).toEqual(['u3']);
  });

  it('lowdb: one small file per live article, read back after a reopen; concurrent writes to one article all land', async () => {
    const dataDir = makeTempDir();
    const store = await openStore(dataDir, 'write');
    await store.live.putCoverage(coverage('story'));
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.live.putUpdate(update('story', `u${String(i).padStart(2, '0')}`))));
    await store.close();
    const files = fs.readdirSync(path.join(dataDir, 'live'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.json'));
    expect(files).toHaveLength(1);

    const again = await openStore(dataDir, 'write');
    opened.push(again);
    expect(await again.live.listUpdates('story')).toHaveLength(20);
    expect((await again.live.getCoverage('story'))?.articleId).toBe('story');
    const read = await openStore(dataDir, 'read');
    opened.push(read);
    await expect(read.live.putUpdate(update('story', 'x'))).rejects.toThrow(/read-only/);
  });
});

describe('what a live write costs in files', () => {
  async function archive(store: Store, count: number): Promise<ArticleRecord> {
    const live = published('live-story', { section: 'world' });
    await store.articles.insert(live);
    for (let i = 0; i < count; i++) await store.articles.insert(published(`filler-${count}-${i}`, { section: i % 2 ? 'world' : 'tech' }));
    await store.live.putCoverage(coverage(live.id));
    return live;
  }

  it('a fresh live article: its page, live.json and both feeds; an old one outside the feeds: its page and live.json, at any archive size', async () => {
    for (const size of [3, 240]) {
      const { store } = await freshStore();
      const live = await archive(store, size);
      const paths = await computeLivePaths(store, live);
      // 240 newer articles push it out of both feeds (50 items each); 3 leave it in.
      expect(paths).toEqual(
        size === 3
          ? ['/article/live-story', '/article/live-story/live.json', '/rss.xml', '/section/world/rss.xml']
          : ['/article/live-story', '/article/live-story/live.json'],
      );
    }
  });

  it('an unpublished article queues nothing', async () => {
    const { store } = await freshStore();
    const draft = published('quiet', { status: 'draft' });
    await store.articles.insert(draft);
    await store.live.putCoverage(coverage(draft.id));
    expect(await computeLivePaths(store, draft)).toEqual([]);
  });

  it('an article write moves live.json with the page: unpublished, published again, a new slug', async () => {
    const { store } = await freshStore();
    const live = published('moving');
    await store.articles.insert(live);
    await store.live.putCoverage(coverage(live.id));
    const draft = { ...live, status: 'draft' as const, updatedAt: tick() };
    await store.articles.replace(draft);
    expect(await computeAffectedPaths(store, [{ before: live, after: draft }])).toContain('/article/moving/live.json');
    const renamed = { ...live, slug: 'moved', updatedAt: tick() };
    await store.articles.replace(renamed);
    const paths = await computeAffectedPaths(store, [{ before: draft, after: renamed }]);
    expect(paths).toContain('/article/moved/live.json');
    // An edit that keeps it where it was leaves live.json alone.
    const edited = { ...renamed, title: 'New title', updatedAt: tick() };
    await store.articles.replace(edited);
    expect(await computeAffectedPaths(store, [{ before: renamed, after: edited }])).not.toContain('/article/moved/live.json');
    expect(await listPublicPaths(store)).toContain('/article/moved/live.json');
  });
});

describe('the page lane and search', () => {
  it('an article page written again from the same record (a live update) queues no re-index; a changed record does', async () => {
    const runtime = await makeRuntime();
    opened.push(runtime.store);
    const article = published('indexed');
    await runtime.store.articles.insert(article);
    let body = '<p>page</p>';
    const render: Renderer = async () => ({ kind: 'page', body: new TextEncoder().encode(body) });
    const queued: string[][] = [];
    const lane = createPageLane({
      regenerator: createRegenerator({ clientDir: path.join(makeTempDir(), 'client'), render }),
      store: runtime.store,
      metrics: runtime.metrics,
      stats: { written: 0, deleted: 0, unchanged: 0, renderMs: 0 },
      sharedOwner: undefined,
      purge: () => {},
      queueSearch: async (bundles) => void queued.push(bundles),
    });
    await lane.render('/article/indexed');
    expect(queued).toHaveLength(1);
    body = '<p>page with a live update</p>';
    expect((await lane.render('/article/indexed')).outcome).toBe('written');
    expect(queued).toHaveLength(1);
    await runtime.store.articles.replace({ ...article, title: 'Edited', updatedAt: tick() });
    body = '<p>edited page</p>';
    await lane.render('/article/indexed');
    expect(queued).toHaveLength(2);
  });
});

describe('live.json as a served file', () => {
  it('is a regenerable path with its file beside the article page, found on disk by the reconcile', () => {
    expect(isRegenerablePath('/article/a-story/live.json')).toBe(true);
    expect(isRegenerablePath('/article/a-story/other.json')).toBe(false);
    const client = makeTempDir();
    expect(fileForPath(client, '/article/a-story/live.json')).toBe(path.join(client, 'article', 'a-story', 'live.json'));
    fs.mkdirSync(path.join(client, 'article', 'a-story'), { recursive: true });
    fs.writeFileSync(path.join(client, 'article', 'a-story', 'live.json'), '{}');
    expect(listRenderedPaths(client)).toContain('/article/a-story/live.json');
    expect(listRenderedPaths(client, new Set(['/article/a-story/live.json']))).not.toContain('/article/a-story/live.json');
  });

  it('carries the newest updates with their plain text, paragraphs apart', async () => {
    const { store } = await freshStore();
    await store.live.putCoverage(coverage('s', { keyPoints: ['Key'] }));
    await store.live.putUpdate(update('s', 'old', { bodyHtml: '<p>One.</p><p>Two.</p>' }));
    await store.live.putUpdate(update('s', 'new', { bodyHtml: '<p>Three &amp; four.</p>', isBreaking: true }));
    const feed = await loadLiveFeed(store, 's', 1);
    expect(feed).toMatchObject({ status: 'live', keyPoints: ['Key'], total: 2 });
    expect(feed!.updates).toEqual([expect.objectContaining({ id: 'new', text: 'Three & four.', isBreaking: true })]);
    expect((await loadLiveFeed(store, 's'))!.updates[1]!.text).toBe('One. Two.');
    expect(await loadLiveFeed(store, 'not-live')).toBeUndefined();
  });
});

describe('the RSS item of a live article', () => {
  const config = parseConfig({ SITE_URL: 'https://news.example', SEED: 'none' });
  const item = {
    slug: 'storm',
    title: 'Storm',
    authorName: 'Desk',
    section: 'world' as const,
    status: 'published' as const,
    publishedAt: '2026-03-01T08:00:00.000Z',
  };

  it('names the newest update before the dek while live, and the count once ended; one item either way', () => {
    const live = buildRss(config, [
      { ...item, dek: 'The dek.', live: { status: 'live', updates: 3, latestAt: '2026-03-01T09:05:00.000Z', latestText: 'Winds ease.' } },
    ]);
    expect(live).toContain('<description>Live: latest update at 09:05 UTC: Winds ease. The dek.</description>');
    expect(live.match(/<item>/g)).toHaveLength(1);
    const ended = buildRss(config, [{ ...item, live: { status: 'ended', updates: 3 } }]);
    expect(ended).toContain('<description>Live coverage ended (3 updates).</description>');
    expect(buildRss(config, [item]).split('<item>')[1]).not.toContain('<description>');
  });
});

describe('pure helpers', () => {
  it('labels, unseen updates, headlines and plain text turned into paragraphs', () => {
    expect(newUpdatesLabel(1)).toBe('1 new update');
    expect(newUpdatesLabel(3)).toBe('3 new updates');
    const u = (id: string) => ({ id, at: '', updatedAt: '', html: '', text: '', isBreaking: false });
    expect(unseenUpdates({ updates: [u('c'), u('b'), u('a')] }, new Set(['a', 'b'])).map((x) => x.id)).toEqual(['c']);
    expect(headlineOf('Talks end. More tomorrow.')).toBe('Talks end.');
    expect(headlineOf('x'.repeat(200))).toHaveLength(110);
    expect(textToUpdateHtml('First line\nsecond\n\nNext 2 < 3 & more')).toBe('<p>First line<br>second</p><p>Next 2 &lt; 3 &amp; more</p>');
    expect(textToUpdateHtml('<p>Already <em>HTML</em></p>')).toBe('<p>Already <em>HTML</em></p>');
  });

  it('the JSON-LD fields: coverage times, updates as BlogPosting, the newest change as dateModified', () => {
    const ld = liveJsonLd(
      {
        status: 'ended',
        startedAt: '2026-03-01T08:00:00.000Z',
        endedAt: '2026-03-01T12:00:00.000Z',
        keyPoints: [],
        total: 1,
        updates: [
          {
            id: 'u',
            at: '2026-03-01T09:00:00.000Z',
            updatedAt: '2026-03-01T09:30:00.000Z',
            html: '<p>Hi.</p>',
            text: 'Hi.',
            isBreaking: false,
            image: '/i.webp',
          },
        ],
      },
      'https://news.example/article/s',
      (p) => `https://news.example${p}`,
      '2026-03-01T07:00:00.000Z',
    );
    expect(ld).toEqual({
      dateModified: '2026-03-01T12:00:00.000Z',
      coverageStartTime: '2026-03-01T08:00:00.000Z',
      coverageEndTime: '2026-03-01T12:00:00.000Z',
      liveBlogUpdate: [
        {
          '@type': 'BlogPosting',
          headline: 'Hi.',
          datePublished: '2026-03-01T09:00:00.000Z',
          dateModified: '2026-03-01T09:30:00.000Z',
          articleBody: 'Hi.',
          url: 'https://news.example/article/s#update-u',
          image: 'https://news.example/i.webp',
        },
      ],
    });
  });
});

describe('readLiveFeed (the reader island, without zod)', () => {
  it('takes a live.json with a status and updates that have ids, and refuses anything else', () => {
    const feed = { status: 'live', updates: [{ id: 'u1', bodyHtml: '<p>One</p>' }], total: 1 };
    expect(readLiveFeed(feed)?.updates.map((u) => u.id)).toEqual(['u1']);
    expect(readLiveFeed({ status: 'ended', updates: [] })?.status).toBe('ended');
    for (const bad of [null, 'text', {}, { status: 'paused', updates: [] }, { status: 'live', updates: [{}] }, { status: 'live' }])
      expect(readLiveFeed(bad)).toBeUndefined();
  });
});
