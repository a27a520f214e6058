/** The publishing pipeline's logic on a real lowdb store: which pages a write affects, the feeds and sitemaps, safe file writes. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.ts';
import type { ArticleRecord } from '../../src/schemas/article.ts';
import type { Section } from '../../src/schemas/common.ts';
import type { ArticleChange } from '../../src/server/runtime.ts';
import { fileForPath, isRegenerablePath, listPublicPaths, listRenderedPaths, planPublicPaths } from '../../src/server/publishing/paths.ts';
import {
  cardFingerprint,
  changedListingFiles,
  feedChanged,
  sectionLists,
  type SectionList,
} from '../../src/server/publishing/listing-changes.ts';
import { computeAffectedPaths } from '../../src/server/publishing/affected-paths.ts';
import {
  buildNewsSitemap,
  buildPeriodSitemap,
  buildRobots,
  buildRss,
  buildSitemap,
  buildSitemapIndex,
  FEED_SIZE,
  feedFingerprint,
  listNewsworthy,
  listPublished,
} from '../../src/server/publishing/feeds.ts';
import { countListingPages, fileOfReaderPage, listingSlice, readerPageOfFile } from '../../src/lib/pagination.ts';
import { SECTION_PAGE_SIZE, sectionPagePath } from '../../src/server/page-data.ts';
import { deleteServedFile, writeFileAtomic } from '../../src/server/publishing/files.ts';
import { manifestMatches, readRenderManifest, writeRenderManifest } from '../../src/server/publishing/manifest.ts';
import { parseConfig } from '../../src/config.ts';
import { articleRecord } from './support.ts';
import { compareRecent, computeAllRelated } from '../../src/server/related.ts';

let dir: string;
let store: Store;
let clock = Date.parse('2026-01-10T12:00:00Z');

function article(overrides: Partial<ArticleRecord> & { slug: string; section?: Section }): ArticleRecord {
  clock += 60_000;
  const at = new Date(clock).toISOString();
  return articleRecord({
    id: overrides.slug,
    title: `Title of ${overrides.slug}`,
    authorName: 'A. Writer',
    createdAt: at,
    updatedAt: at,
    publishedAt: at,
    ...overrides,
  });
}

/** Writes like the article service does, answering the change the hook receives. */
async function save(before: ArticleRecord | undefined, after: ArticleRecord | undefined): Promise<ArticleChange[]> {
  if (!before && after) await store.articles.insert(after);
  else if (before && after) await store.articles.replace(after);
  else if (before) await store.articles.delete(before.id);
  return [{ before, after }];
}

async function seed(section: Section, count: number): Promise<ArticleRecord[]> {
  const made: ArticleRecord[] = [];
  for (let i = 0; i < count; i++) {
    const a = article({ slug: `${section}-${i}`, section });
    await store.articles.insert(a);
    made.push(a);
  }
  return made;
}

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-publishing-unit-'));
  store = await openStore(path.join(dir, 'data'), 'write');
});

afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('computeAffectedPaths', () => {
  it('answers nothing for writes readers cannot see (drafts, scheduled)', async () => {
    const draft = article({ slug: 'draft', status: 'draft' });
    expect(await computeAffectedPaths(store, await save(undefined, draft))).toEqual([]);
    const edited = { ...draft, title: 'Still a draft', updatedAt: new Date(++clock).toISOString() };
    expect(await computeAffectedPaths(store, await save(draft, edited))).toEqual([]);
    const scheduled = { ...edited, status: 'scheduled' as const, scheduledFor: '2099-01-01T00:00:00Z' };
    expect(await computeAffectedPaths(store, await save(edited, scheduled))).toEqual([]);
  });

  it('publishing a first article: its page, its section page 1, its author archive (issue 35), the feeds and the sitemaps', async () => {
    const a = article({ slug: 'first', section: 'tech' });
    const paths = await computeAffectedPaths(store, await save(undefined, a), clock);
    expect(paths).toEqual([
      '/article/first',
      '/section/tech',
      '/author/a-writer',
      '/section/tech/rss.xml',
      '/author/a-writer/pages.json',
      '/author/a-writer/rss.xml',
      '/sitemaps/archives.xml',
      '/rss.xml',
      '/sitemap.xml',
      '/sitemaps/2026-01.xml',
      '/news-sitemap.xml',
    ]);
  });

  it('a new article on a full first page creates the first archive file and the new page count', async () => {
    await seed('world', 12);
    const a = article({ slug: 'newest', section: 'world' });
    const paths = await computeAffectedPaths(store, await save(undefined, a), clock);
    expect(paths).toContain('/section/world');
    expect(paths).toContain('/section/world/page/2');
    expect(paths).toContain('/section/world/pages.json');
    expect(paths.filter((p) => p.startsWith('/section/') && !/\.(xml|json)$/.test(p))).toHaveLength(2);
  });

  it('editing a card of the oldest articles touches their archive file only (same page count)', async () => {
    const made = await seed('world', 20);
    const oldest = made[0]!;
    const after = { ...oldest, title: 'A better headline', updatedAt: new Date(++clock).toISOString() };
    const paths = await computeAffectedPaths(store, await save(oldest, after), clock);
    expect(paths).toContain('/article/world-0');
    expect(paths).toContain('/section/world/page/2');
    expect(paths).not.toContain('/section/world');
    expect(paths).toContain('/sitemap.xml');
  });

  it('a body-only edit changes the article page and the sitemap date, not listings or feeds', async () => {
    const [a] = await seed('culture', 3);
    const after = { ...a!, bodyHtml: '<p>Corrected body</p>', updatedAt: new Date(++clock).toISOString() };
    const paths = await computeAffectedPaths(store, await save(a, after), clock);
    expect(paths).toEqual(['/article/culture-0', '/sitemap.xml', '/sitemaps/2026-01.xml']);
  });

  it('unpublishing removes the article and the now out-of-range last page', async () => {
    const made = await seed('sports', 13);
    const target = made[5]!;
    const after = { ...target, status: 'archived' as const, updatedAt: new Date(++clock).toISOString() };
    const paths = await computeAffectedPaths(store, await save(target, after), clock);
    expect(paths).toContain('/article/sports-5');
    expect(paths).toContain('/section/sports');
    expect(paths).toContain('/section/sports/page/2'); // rendered as missing: the worker deletes it
    expect(paths).toContain('/section/sports/rss.xml');
    expect(paths).toContain('/rss.xml');
  });

  it('moving an article to another section touches both sections, and deleting touches its old slug', async () => {
    const [w] = await seed('world', 2);
    await seed('tech', 2);
    const moved = { ...w!, section: 'tech' as const, updatedAt: new Date(++clock).toISOString() };
    const paths = await computeAffectedPaths(store, await save(w, moved), clock);
    expect(paths).toEqual(
      expect.arrayContaining(['/article/world-0', '/section/world', '/section/tech', '/section/world/rss.xml', '/section/tech/rss.xml']),
    );
    const gone = await computeAffectedPaths(store, await save(moved, undefined), clock);
    expect(gone).toEqual(expect.arrayContaining(['/article/world-0', '/section/tech', '/sitemap.xml']));
    expect(gone).not.toContain('/section/world');
  });

  it('a publish into a tag of many pages writes its page 1, newest archive file and feed, and no other article page (issue 35)', async () => {
    for (let i = 0; i < 40; i++) await store.articles.insert(article({ slug: `tagged-${i}`, section: 'world', tags: ['Climate'] }));
    const a = article({ slug: 'tagged-new', section: 'world', tags: ['climate'] });
    const paths = await computeAffectedPaths(store, await save(undefined, a), clock);
    expect(paths.filter((p) => p.startsWith('/tag/')).sort()).toEqual(['/tag/climate', '/tag/climate/page/4', '/tag/climate/rss.xml']);
    expect(paths.filter((p) => p.startsWith('/article/'))).toEqual(['/article/tagged-new']);
  });

  it('unpublishing an article rewrites every page whose related reading showed it, a bounded few (issue 35)', async () => {
    const made: ArticleRecord[] = [];
    for (let i = 0; i < 30; i++) {
      const a = article({ slug: `alp-${i}`, section: i % 2 ? 'world' : 'tech', tags: i % 3 ? ['Alps'] : ['Alps', 'Glaciers'] });
      await store.articles.insert(a);
      made.push(a);
    }
    const rules = { merged: {}, hidden: {} };
    const shownBy = (id: string) =>
      [...computeAllRelated([...made].sort(compareRecent), rules)]
        .filter(([, list]) => list.some((r) => r.id === id))
        .map(([page]) => `/article/${page}`);
    const target = made[12]!;
    const showing = shownBy(target.id);
    expect(showing.length).toBeGreaterThan(0);
    const paths = await computeAffectedPaths(
      store,
      await save(target, { ...target, status: 'draft', updatedAt: new Date(++clock).toISOString() }),
      clock,
    );
    const pages = paths.filter((p) => p.startsWith('/article/'));
    expect(pages).toEqual(expect.arrayContaining(showing));
    // At most a window of four per tag, section and site, besides its own page.
    expect(pages.length).toBeLessThanOrEqual(1 + 4 * 4);
  });

  it('an article older than the 50 newest leaves the feeds alone, and one outside two days leaves the news sitemap alone', async () => {
    const old = article({ slug: 'ancient', section: 'opinion', publishedAt: '2020-01-01T00:00:00.000Z' });
    await store.articles.insert(old);
    for (let i = 0; i < 51; i++) await store.articles.insert(article({ slug: `op-${i}`, section: 'opinion' }));
    const after = { ...old, title: 'Retitled', updatedAt: new Date(++clock).toISOString() };
    const paths = await computeAffectedPaths(store, await save(old, after), clock);
    expect(paths).not.toContain('/rss.xml');
    expect(paths).not.toContain('/section/opinion/rss.xml');
    expect(paths).not.toContain('/news-sitemap.xml');
    // Archive files are filled from the oldest article: the oldest one is on file 2.
    expect(paths.filter((p) => p.startsWith('/section/opinion') && !p.endsWith('.xml'))).toEqual(['/section/opinion/page/2']);
  });
});

/** What a listing file shows, straight from the layout rules: the check the fingerprints must agree with. */
function renderedListing(list: readonly ArticleRecord[], file: number): string | undefined {
  const slice = listingSlice(list.length, file, 12);
  if (!slice) return undefined;
  const total = countListingPages(list.length, 12);
  const cards = list.slice(slice.offset, slice.offset + slice.limit).map((a) => `${a.slug}:${a.title}`);
  return JSON.stringify(file === 1 ? { total, cards } : { newest: file === total, cards });
}

describe('sectionLists: the section read around the changes only', () => {
  it('gives the listing files and feed the whole section gives, for edits, publishes, moves, unpublishes and deletes', async () => {
    const made = [...(await seed('world', 150)), ...(await seed('business', 30))];
    // Ties: several articles published in the same millisecond (ordered by id).
    const tie = new Date(clock - 40 * 60_000).toISOString();
    for (const slug of ['tie-a', 'tie-b', 'tie-c']) {
      const a = article({ slug, section: 'world', publishedAt: tie, updatedAt: tie });
      await store.articles.insert(a);
      made.push(a);
    }
    let seedState = 7;
    const random = () => (seedState = (seedState * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pick = () => made[Math.floor(random() * made.length)]!;
    const whole = async (section: Section) => listPublished(store, section);
    let windowed = 0;
    for (let round = 0; round < 120; round++) {
      const kind = round % 6;
      const current = await store.articles.get(pick().id);
      let change: ArticleChange[];
      const beforeLists = { world: await whole('world'), business: await whole('business') };
      if (kind === 0 && current) change = await save(current, { ...current, title: `${current.title} (edited ${round})` });
      else if (kind === 1) {
        const fresh = article({ slug: `fresh-${round}`, section: random() < 0.7 ? 'world' : 'business' });
        made.push(fresh);
        change = await save(undefined, fresh);
      } else if (kind === 2 && current) {
        // Backdated: moved to another place in the list.
        const at = new Date(Date.parse('2026-01-10T12:00:00Z') + Math.floor(random() * 200) * 60_000 + 1).toISOString();
        change = await save(current, { ...current, publishedAt: at });
      } else if (kind === 3 && current)
        change = await save(current, { ...current, status: current.status === 'published' ? 'draft' : 'published' });
      else if (kind === 4 && current)
        change = await save(current, { ...current, section: current.section === 'world' ? 'business' : 'world' });
      else if (kind === 5 && current) {
        change = await save(current, undefined);
        made.splice(
          made.findIndex((a) => a.id === current.id),
          1,
        );
      } else continue;
      for (const section of ['world', 'business'] as const) {
        const lists = await sectionLists(store, section, change);
        const after = await whole(section);
        const before = beforeLists[section];
        if (lists.after.slice().some((a) => !a.id)) windowed++;
        expect(lists.after.length, `round ${round}`).toBe(after.length);
        expect(lists.before.length, `round ${round}`).toBe(before.length);
        expect(changedListingFiles(lists.before, lists.after, SECTION_PAGE_SIZE, cardFingerprint), `round ${round} ${section}`).toEqual(
          changedListingFiles(before, after, SECTION_PAGE_SIZE, cardFingerprint),
        );
        const feed = (list: SectionList) => list.slice(0, FEED_SIZE).map(feedFingerprint).join('\n');
        expect(feed(lists.before) === feed(lists.after), `round ${round} ${section} feed`).toBe(feed(before) === feed(after));
        expect(feedChanged(lists.before, lists.after), `round ${round} ${section} feedChanged`).toBe(feed(before) !== feed(after));
      }
    }
    // Most rounds read a window, not the whole section.
    expect(windowed).toBeGreaterThan(50);
  });
});

describe('stable listing pages', () => {
  it('files are filled from the oldest: 12 on page 1, full archive files, the newest archive file partly filled', () => {
    expect(countListingPages(0, 12)).toBe(1);
    expect(listingSlice(0, 1, 12)).toEqual({ offset: 0, limit: 0 });
    expect(listingSlice(5, 2, 12)).toBeUndefined();
    // 25 articles: page 1 the newest 12, file 2 the oldest 12, file 3 the one in between.
    expect(listingSlice(25, 1, 12)).toEqual({ offset: 0, limit: 12 });
    expect(listingSlice(25, 2, 12)).toEqual({ offset: 13, limit: 12 });
    expect(listingSlice(25, 3, 12)).toEqual({ offset: 12, limit: 1 });
    expect(listingSlice(25, 4, 12)).toBeUndefined();
    // Readers count from the newest: reader page 2 is the newest archive file.
    expect(fileOfReaderPage(1, 72)).toBe(1);
    expect(fileOfReaderPage(2, 72)).toBe(72);
    expect(fileOfReaderPage(72, 72)).toBe(2);
    expect(readerPageOfFile(71, 72)).toBe(3);
    // Every article is on exactly one file, newest first across reader pages 1..n.
    for (const count of [1, 12, 13, 24, 25, 100, 491]) {
      const total = countListingPages(count, 12);
      const seen: number[] = [];
      for (let page = 1; page <= total; page++) {
        const { offset, limit } = listingSlice(count, fileOfReaderPage(page, total), 12)!;
        for (let i = offset; i < offset + limit; i++) seen.push(i);
      }
      expect(seen, `count ${count}`).toEqual(Array.from({ length: count }, (_, i) => i));
    }
  });

  it('a publish into a section of 41 pages rewrites page 1 and the newest archive file only, and the others stay identical', async () => {
    await seed('world', 12 * 40 + 5);
    let list = await listPublished(store, 'world');
    const counts: number[] = [];
    for (let i = 0; i < 30; i++) {
      const a = article({ slug: `fresh-${i}`, section: 'world' });
      const paths = await computeAffectedPaths(store, await save(undefined, a), clock);
      const after = await listPublished(store, 'world');
      const listings = paths.filter((p) => p.startsWith('/section/world') && !/\.(xml|json)$/.test(p));
      counts.push(listings.length);
      // Every listing file not named renders exactly as before; every one named really changed.
      const files = Math.max(countListingPages(list.length, 12), countListingPages(after.length, 12));
      for (let file = 1; file <= files; file++) {
        const named = listings.includes(sectionPagePath('world', file));
        expect(renderedListing(list, file) !== renderedListing(after, file), `file ${file} after ${i + 1} publishes`).toBe(named);
      }
      list = after;
    }
    // Page 1 and the newest file, plus the file before it when a new one opens: never the 40 full ones.
    expect(Math.max(...counts)).toBeLessThanOrEqual(3);
    expect(Math.min(...counts)).toBe(2);
  });

  it('an edit, an unpublish and a back-dated insert deep in the archive touch only the files from that point on', async () => {
    const made = await seed('tech', 12 * 10);
    let list = await listPublished(store, 'tech');
    const check = async (changes: ArticleChange[]) => {
      const paths = await computeAffectedPaths(store, changes, clock);
      const after = await listPublished(store, 'tech');
      const named = paths.filter((p) => p.startsWith('/section/tech') && !/\.(xml|json)$/.test(p));
      const files = Math.max(countListingPages(list.length, 12), countListingPages(after.length, 12));
      const differ = Array.from({ length: files }, (_, i) => i + 1).filter(
        (file) => renderedListing(list, file) !== renderedListing(after, file),
      );
      expect(named.sort()).toEqual(differ.map((file) => sectionPagePath('tech', file)).sort());
      list = after;
      return differ;
    };
    const retitled = { ...made[30]!, title: 'Retitled', updatedAt: new Date(++clock).toISOString() };
    expect(await check(await save(made[30], retitled))).toEqual([4]);
    const archived = { ...made[100]!, status: 'archived' as const, updatedAt: new Date(++clock).toISOString() };
    expect((await check(await save(made[100], archived))).length).toBeGreaterThan(0);
    const backdated = article({
      slug: 'backdated',
      section: 'tech',
      publishedAt: new Date(Date.parse(made[50]!.publishedAt!) + 1).toISOString(),
    });
    await check(await save(undefined, backdated));
  });
});

describe('paths and files', () => {
  it('lists every public path of the data and the rendered files on disk', async () => {
    await seed('home', 13);
    const paths = await listPublicPaths(store);
    expect(paths).toContain('/section/home/page/2');
    expect(paths).toContain('/article/home-12');
    expect(paths).toContain('/robots.txt');
    expect(paths).toContain('/section/home/pages.json');
    expect(paths).toContain('/sitemaps/pages.xml');
    expect(paths).toContain('/sitemaps/2026-01.xml');
    expect(paths.every(isRegenerablePath)).toBe(true);
    const client = path.join(dir, 'client');
    const rendered = [
      '/article/x',
      '/section/world',
      '/section/world/page/3',
      '/section/world/pages.json',
      '/section/world/rss.xml',
      '/sitemaps/2025-12.xml',
    ];
    for (const p of rendered) {
      fs.mkdirSync(path.dirname(fileForPath(client, p)), { recursive: true });
      fs.writeFileSync(fileForPath(client, p), 'x');
    }
    expect(listRenderedPaths(client).sort()).toEqual(rendered.sort());
    // The paths the data has are left out: what remains are the files to remove.
    const wanted = new Set(rendered.filter((p) => p.startsWith('/article/') || p.endsWith('rss.xml')));
    expect(listRenderedPaths(client, wanted).sort()).toEqual(rendered.filter((p) => !wanted.has(p)).sort());
  });

  it('orders every path newest first: the front pages, then articles and listing files by depth in the archive', async () => {
    const home = await seed('home', 26); // home-25 is the newest
    const tech = await seed('tech', 5);
    const { paths, marks } = await planPublicPaths(store, clock + 3_600_000);
    expect(paths.slice().sort()).toEqual((await listPublicPaths(store)).slice().sort());
    expect(new Set(paths).size).toBe(paths.length);

    const [front, lastDay] = marks;
    expect(front).toMatchObject({ label: 'the front pages' });
    const frontPaths = paths.slice(0, front!.end);
    for (const expected of [
      '/section/home',
      '/section/tech',
      '/section/world',
      '/corrections',
      '/rss.xml',
      '/sitemap.xml',
      '/author/a-writer',
    ])
      expect(frontPaths).toContain(expected);
    expect(frontPaths.filter((p) => /^\/article\/|\/page\/\d+$/.test(p))).toEqual([]);

    // Past the front pages, articles run newest first, across sections.
    const articles = paths.filter((p) => p.startsWith('/article/'));
    const newestFirst = [...home, ...tech].sort((a, b) => compareRecent(a, b)).map((a) => `/article/${a.slug}`);
    expect(articles).toEqual(newestFirst);
    // A listing file comes just before the newest article it shows: home's file 3 holds the 13th and 14th
    // newest of 26 (home-13, home-12), file 2 the oldest 12 (home-11 down to home-0).
    const at = (p: string) => paths.indexOf(p);
    expect(at('/section/home/page/3')).toBeLessThan(at('/article/home-13'));
    expect(at('/section/home/page/3')).toBeGreaterThan(at('/article/home-14'));
    expect(at('/section/home/page/2')).toBeLessThan(at('/article/home-11'));
    expect(at('/section/home/page/2')).toBeGreaterThan(at('/article/home-12'));

    // The last day's mark ends after the oldest article of that day, and covers every one of them.
    const cutoff = clock + 3_600_000 - 86_400_000;
    const ofTheDay = [...home, ...tech].filter((a) => Date.parse(a.publishedAt!) >= cutoff).map((a) => `/article/${a.slug}`);
    expect(ofTheDay.length).toBe(31);
    expect(lastDay).toMatchObject({ label: 'the last 24 hours', end: at('/article/home-0') + 1 });
    const older = await planPublicPaths(store, clock + 86_400_000 - 150_000);
    // Now only the three newest (tech-4, tech-3, tech-2) are of the last day.
    expect(older.marks[1]!.end).toBe(older.paths.indexOf('/article/tech-2') + 1);
    expect(older.paths.slice(older.marks[0]!.end, older.marks[1]!.end).filter((p) => p.startsWith('/article/'))).toEqual([
      '/article/tech-4',
      '/article/tech-3',
      '/article/tech-2',
    ]);
  });

  it('refuses paths outside the regenerable set', () => {
    for (const bad of [
      '/article/../etc',
      '/article/.hidden',
      '/section/markets',
      '/section/world/page/0',
      '/admin',
      '/article/a/b',
      '/sitemaps/../x.xml',
      '/sitemaps/2026-1.xml',
      '/section/world/other.json',
    ]) {
      expect(isRegenerablePath(bad), bad).toBe(false);
      expect(() => fileForPath(dir, bad)).toThrow();
    }
    expect(fileForPath('/srv/client', '/article/a-b')).toBe('/srv/client/article/a-b/index.html');
    expect(fileForPath('/srv/client', '/section/tech/rss.xml')).toBe('/srv/client/section/tech/rss.xml');
  });

  it('writes atomically, skips identical content, and deletes with the emptied folder', async () => {
    const client = path.join(dir, 'client');
    const target = fileForPath(client, '/article/atomic');
    expect(await writeFileAtomic(target, Buffer.from('one'))).toBe('written');
    const mtime = fs.statSync(target).mtimeMs;
    expect(await writeFileAtomic(target, Buffer.from('one'))).toBe('unchanged');
    expect(fs.statSync(target).mtimeMs).toBe(mtime);
    expect(await writeFileAtomic(target, Buffer.from('two'))).toBe('written');
    expect(fs.readFileSync(target, 'utf8')).toBe('two');
    expect(fs.readdirSync(path.dirname(target))).toEqual(['index.html']);
    expect(await deleteServedFile(target, client)).toBe('deleted');
    expect(fs.existsSync(path.dirname(target))).toBe(false);
    expect(fs.existsSync(client)).toBe(true);
    expect(await deleteServedFile(target, client)).toBe('absent');
  });

  it('writes what the render thread prepared: its twins as they are, or nothing for a file it found unchanged', async () => {
    const client = path.join(dir, 'client');
    const target = fileForPath(client, '/article/prepared');
    const body = Buffer.from(`<p>${'Prepared on the render thread. '.repeat(40)}</p>`);
    const twins = { br: Buffer.from('the brotli twin, as made'), gzip: Buffer.from('the gzip twin, as made') };
    const refuse = () => Promise.reject(new Error('prepared twins are not made again'));
    expect(await writeFileAtomic(target, body, refuse, { unchanged: false, twins })).toBe('written');
    expect(fs.readFileSync(target).equals(body)).toBe(true);
    expect(fs.readFileSync(`${target}.br`, 'utf8')).toBe('the brotli twin, as made');
    expect(fs.readFileSync(`${target}.gz`, 'utf8')).toBe('the gzip twin, as made');
    const mtime = fs.statSync(target).mtimeMs;
    // Found unchanged there: not read nor written here, twins present.
    expect(await writeFileAtomic(target, body, refuse, { unchanged: true })).toBe('unchanged');
    expect(fs.statSync(target).mtimeMs).toBe(mtime);
    // A twin missing beside an unchanged file is made again.
    fs.rmSync(`${target}.gz`);
    expect(await writeFileAtomic(target, body, undefined, { unchanged: true })).toBe('unchanged');
    expect(zlib.gunzipSync(fs.readFileSync(`${target}.gz`)).equals(body)).toBe(true);
  });

  it('reads back the render manifest it wrote and compares it with a store', () => {
    const file = path.join(dir, 'render-state.json');
    expect(readRenderManifest(file)).toBeUndefined();
    writeRenderManifest(file, { storeId: 's1', version: 4, renderedAt: new Date().toISOString(), by: 'build' });
    expect(manifestMatches(readRenderManifest(file), { id: 's1', version: 4 })).toBe(true);
    expect(manifestMatches(readRenderManifest(file), { id: 's1', version: 5 })).toBe(false);
    expect(manifestMatches(readRenderManifest(file), { id: 's2', version: 4 })).toBe(false);
    writeRenderManifest(file, {
      storeId: 's1',
      version: 4,
      renderedAt: new Date().toISOString(),
      by: 'server',
      siteUrl: 'https://a.example',
    });
    expect(manifestMatches(readRenderManifest(file), { id: 's1', version: 4 }, 'https://a.example')).toBe(true);
    expect(manifestMatches(readRenderManifest(file), { id: 's1', version: 4 }, 'https://b.example')).toBe(false);
  });
});

describe('feeds and sitemaps', () => {
  const config = parseConfig({ SITE_URL: 'https://news.example', SITE_NAME: 'Meridian News' });

  it('RSS 2.0 with escaped text, absolute links and a date taken from the newest item', () => {
    const a = article({ slug: 'rss-item', title: 'Cats & <dogs>', dek: 'A "quoted" dek', section: 'tech' });
    const xml = buildRss(config, [a], 'tech');
    expect(xml).toContain('<rss version="2.0"');
    expect(xml).toContain('<title>Technology | Meridian News</title>');
    expect(xml).toContain('<title>Cats &amp; &lt;dogs&gt;</title>');
    expect(xml).toContain('<link>https://news.example/article/rss-item</link>');
    expect(xml).toContain(`<lastBuildDate>${new Date(a.publishedAt!).toUTCString()}</lastBuildDate>`);
    expect(xml).toContain('href="https://news.example/section/tech/rss.xml" rel="self"');
    expect(buildRss(config, [a], 'tech')).toBe(xml);
  });

  it('sitemap with static pages, sections and articles; news sitemap with the last two days only', () => {
    const fresh = article({ slug: 'fresh' });
    const stale = article({ slug: 'stale', publishedAt: '2020-05-01T00:00:00.000Z' });
    const sitemap = buildSitemap(config, [fresh, stale], ['/about']);
    expect(sitemap).toContain('<loc>https://news.example/about</loc>');
    expect(sitemap).toContain('<loc>https://news.example/section/home</loc>');
    expect(sitemap).toContain(`<loc>https://news.example/article/stale</loc><lastmod>${stale.updatedAt}</lastmod>`);
    const news = buildNewsSitemap(config, [fresh, stale], clock);
    expect(news).toContain('xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"');
    expect(news).toContain('https://news.example/article/fresh');
    expect(news).not.toContain('stale');
    const index = buildSitemapIndex(config, [
      { period: '2026-01', lastmod: fresh.updatedAt },
      { period: '2020-05', lastmod: stale.updatedAt },
    ]);
    expect(index).toContain('<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">');
    expect(index).toContain('<sitemap><loc>https://news.example/sitemaps/pages.xml</loc></sitemap>');
    expect(index).toContain(`<sitemap><loc>https://news.example/sitemaps/2020-05.xml</loc><lastmod>${stale.updatedAt}</lastmod></sitemap>`);
    expect(buildSitemap(config, [stale])).not.toContain('/section/');
    const robots = buildRobots(config);
    expect(robots).toContain('Sitemap: https://news.example/sitemap.xml');
    expect(robots).toContain('Sitemap: https://news.example/news-sitemap.xml');
  });

  it("writes a month's sitemap a batch at a time, the same file as from the month's whole list", async () => {
    // About 1,150 articles in February (two batches and more), a few either side, a draft in the month.
    const start = Date.parse('2026-01-31T22:00:00.000Z');
    for (let i = 0; i < 1210; i++) {
      const publishedAt = new Date(start + i * 35 * 60_000).toISOString();
      await store.articles.insert(article({ slug: `story-${i}`, section: (['world', 'tech'] as const)[i % 2], publishedAt }));
    }
    await store.articles.insert(article({ slug: 'feb-draft', status: 'draft', publishedAt: '2026-02-10T00:00:00.000Z' }));
    const february = (await listPublished(store)).filter((a) => a.publishedAt!.startsWith('2026-02'));
    expect(february.length).toBeGreaterThan(1000);
    expect(february.length).toBeLessThan(1200);
    const sliced = await buildPeriodSitemap(config, store, '2026-02');
    expect(sliced).toBe(buildSitemap(config, february));
    expect(sliced!.match(/<url>/g)).toHaveLength(february.length);
    expect(await buildPeriodSitemap(config, store, '2025-12')).toBeUndefined();
  });

  it('writes the URL new URL() gives for any slug', () => {
    const slugs = ['plain-slug', 'a b', 'é-accent', "o'neil", '.', '..', 'a/b', '?x', '#y', '%41', '(c)*!~'];
    const sitemap = buildSitemap(
      config,
      slugs.map((slug) => article({ slug })),
    );
    for (const slug of slugs)
      expect(sitemap).toContain(
        `<loc>${new URL(`/article/${encodeURIComponent(slug)}`, config.SITE_URL).href.replace(/'/g, '&apos;')}</loc>`,
      );
  });

  it("reads the news sitemap's articles by date range: the last two days, newest first, nothing older or later", async () => {
    const now = Date.parse('2026-03-10T12:00:00.000Z');
    const at = (ms: number) => new Date(now + ms).toISOString();
    const hour = 3_600_000;
    for (const [slug, publishedAt, status] of [
      ['three-days-old', at(-72 * hour), 'published'],
      ['window-edge', at(-48 * hour), 'published'],
      ['an-hour-old', at(-hour), 'published'],
      ['draft-of-today', at(-hour), 'draft'],
      ['thirty-seconds-ahead', at(30_000), 'published'],
      ['an-hour-ahead', at(hour), 'published'],
    ] as const)
      await store.articles.insert(article({ slug, publishedAt, status }));
    const listed = await listNewsworthy(store, now);
    expect(listed.map((a) => a.slug)).toEqual(['thirty-seconds-ahead', 'an-hour-old', 'window-edge']);
    // The same articles the sitemap took from the whole archive before.
    expect(buildNewsSitemap(config, listed, now)).toBe(buildNewsSitemap(config, await listPublished(store), now));
  });
});
