/** Which public paths exist, where their files live, and which of them a set of article changes affects. */
import fs from 'node:fs';
import path from 'node:path';
import { SECTIONS, type Section } from '../../schemas/common.ts';
import type { ArticleRecord } from '../../schemas/article.ts';
import type { Store } from '../../store/types.ts';
import type { ArticleChange } from '../runtime.ts';
import { toSummary } from '../articles.ts';
import { SECTION_PAGE_SIZE, sectionPagePath } from '../page-data.ts';
import { countListingPages, listingFilePath, listingManifestPath, listingSlice } from '../../lib/pagination.ts';
import {
  ARCHIVES_SITEMAP_PATH,
  NEWS_SITEMAP_PATH,
  PAGES_SITEMAP_PATH,
  listPeriods,
  periodOf,
  periodSitemapPath,
  ROBOTS_PATH,
  RSS_PATH,
  SITEMAP_PATH,
  FEED_SIZE,
  feedFingerprint,
  isNewsworthy,
  listPublished,
  newsFingerprint,
  sectionFeedPath,
  sitemapFingerprint,
  termFeedPath,
} from './feeds.ts';
import { listTermsWithPages, mayHavePage, TERM_PAGE_SIZE, termFilter, termPagePaths } from '../archive-pages.ts';
import { listShowingPages, relatedFingerprint } from '../related.ts';
import { readTagRules } from '../tag-rules.ts';
import { slugifyTags, slugifyTerm, termPath, type TagRules, type TermKind } from '../../schemas/taxonomy.ts';
import type { ArticleFilter } from '../../schemas/article.ts';
import { searchBundlePlanner } from './search-index.ts';
import { liveFeedPath } from '../live-feed.ts';
import { timeSlicer } from '../time-slice.ts';

/** The list of every correction (issue 14), regenerated when a correction is added or its article changes. */
export const CORRECTIONS_PATH = '/corrections';

const SLUG = '[A-Za-z0-9_~-][A-Za-z0-9._~-]*';
const SECTION = `(?:${SECTIONS.join('|')})`;
/** A tag or author archive's files (issue 35): slugs as slugifyTerm makes them. */
const TERM = '/(?:tag|author)/[a-z0-9]+(?:-[a-z0-9]+)*(?:/page/[1-9][0-9]{0,6}|/rss\\.xml|/pages\\.json)?';
/** Every path the pipeline may write or delete; anything else is refused before it reaches the disk. */
const PUBLIC_PATH = new RegExp(
  `^(?:/article/${SLUG}(?:/live\\.json)?|/section/${SECTION}(?:/page/[1-9][0-9]{0,6})?|/section/${SECTION}/(?:rss\\.xml|pages\\.json)|${TERM}|/rss\\.xml|/sitemap\\.xml|/sitemaps/(?:pages|archives|[0-9]{4}-[0-9]{2})\\.xml|/news-sitemap\\.xml|/robots\\.txt|${CORRECTIONS_PATH})$`,
);

export function isRegenerablePath(publicPath: string): boolean {
  return PUBLIC_PATH.test(publicPath);
}

export function articlePath(slug: string): string {
  return `/article/${slug}`;
}

/** Whether the path is an HTML page (search indexes it) rather than a feed or text file. */
export function isHtmlPath(publicPath: string): boolean {
  return !/\.(xml|txt|json)$/.test(publicPath);
}

/** The file that serves a public path under the client folder (build.format 'directory'). */
export function fileForPath(clientDir: string, publicPath: string): string {
  if (!isRegenerablePath(publicPath)) throw new Error(`Not a regenerable path: ${publicPath}`);
  const relative = isHtmlPath(publicPath) ? `${publicPath}/index.html` : publicPath;
  return path.join(path.resolve(clientDir), ...relative.split('/').filter(Boolean));
}

/** The machine-readable paths that do not depend on which months have articles. */
export function machinePaths(): string[] {
  return [
    RSS_PATH,
    ...SECTIONS.map(sectionFeedPath),
    ...SECTIONS.map(listingManifestPath),
    SITEMAP_PATH,
    PAGES_SITEMAP_PATH,
    ARCHIVES_SITEMAP_PATH,
    NEWS_SITEMAP_PATH,
    ROBOTS_PATH,
  ];
}

/** Where a part of the newest-first order ends: the paths before `end` hold what `label` names. */
export type OrderMark = { label: string; end: number };

/** The reader-facing parts of the order that a run over every page reports when it has drawn them. */
const RECENT_MARKS = [
  { label: 'the last 24 hours', ms: 86_400_000 },
  { label: 'the last 7 days', ms: 7 * 86_400_000 },
] as const;

/**
 * Every public path the current data has, newest first, as a run over every page (`npm run rebuild --
 * --all`, a server's reconcile after a deploy) should draw them: readers get the new build where they read.
 * First the front pages, where most readers arrive: each listing's first page, the corrections, the feeds,
 * sitemaps and live feeds. Then every other page by how deep in the archive it sits: an article by its
 * rank among the published (newest 0, oldest 1), a section's listing file by the rank of the newest article
 * it shows, a tag's or author's by its own rank in that archive. `marks` say where the front pages and the
 * articles of the last day and week end (their listing files included), for the run's summary.
 */
export async function planPublicPaths(store: Store, now = Date.now()): Promise<{ paths: string[]; marks: OrderMark[] }> {
  const published = await listPublished(store);
  const total = Math.max(1, published.length);
  const front: string[] = [];
  const deep: Array<{ path: string; depth: number }> = [];
  // A section's articles as ranks among all the published (both lists are newest first, the same sort).
  const ranks = new Map<Section, number[]>(SECTIONS.map((section) => [section, []]));
  published.forEach((article, rank) => ranks.get(article.section)?.push(rank));
  for (const section of SECTIONS) {
    const sectionRanks = ranks.get(section)!;
    const count = sectionRanks.length;
    front.push(sectionPagePath(section, 1));
    for (let file = 2; file <= countListingPages(count, SECTION_PAGE_SIZE); file++) {
      const offset = listingSlice(count, file, SECTION_PAGE_SIZE)!.offset;
      deep.push({ path: sectionPagePath(section, file), depth: (sectionRanks[offset] ?? total) / total });
    }
  }
  front.push(CORRECTIONS_PATH, ...machinePaths());
  for (const term of await listTermsWithPages(store)) {
    const [first, ...rest] = termPagePaths(term.kind, term.slug, term.count);
    front.push(first!);
    for (const file of rest) {
      const number = /\/page\/(\d+)$/.exec(file)?.[1];
      if (!number)
        front.push(file); // its feed and pages.json
      else deep.push({ path: file, depth: listingSlice(term.count, Number(number), TERM_PAGE_SIZE)!.offset / term.count });
    }
  }
  front.push(...(await listPeriods(store)).map(({ period }) => periodSitemapPath(period)));
  front.push(...(await listLiveFeedPaths(store, published)));
  // After the listing files: at equal depth a listing goes first, and a mark's end covers it.
  published.forEach((article, rank) => deep.push({ path: articlePath(article.slug), depth: rank / total }));
  deep.sort((a, b) => a.depth - b.depth);

  const paths = [...front, ...deep.map((entry) => entry.path)];
  const marks: OrderMark[] = [{ label: 'the front pages', end: front.length }];
  for (const { label, ms } of RECENT_MARKS) {
    // The oldest article of the period: its own page is the last of the period's in the order.
    const newer = published.findLastIndex((article) => Date.parse(article.publishedAt ?? '') >= now - ms);
    const at = newer < 0 ? -1 : deep.findIndex((entry) => entry.path === articlePath(published[newer]!.slug));
    marks.push({ label, end: front.length + at + 1 });
  }
  return { paths, marks };
}

/** Every public path the current data has, newest first (planPublicPaths). */
export async function listPublicPaths(store: Store): Promise<string[]> {
  return (await planPublicPaths(store)).paths;
}

/** The live.json of every published article that has live coverage (issue 35), from the articles given (published, any order). */
export async function listLiveFeedPaths(store: Store, published: readonly ArticleRecord[]): Promise<string[]> {
  const live = new Set((await store.live.listCoverage()).map((c) => c.articleId));
  return published.filter((a) => live.has(a.id)).map((a) => liveFeedPath(a.slug));
}

/**
 * Public paths that have a file in the client folder now (pages the data may no longer have). Paths
 * in `except` (the ones the data has) are left out unchecked: a file check per article is most of the walk.
 */
export function listRenderedPaths(clientDir: string, except: { has(publicPath: string): boolean } = new Set()): string[] {
  const found: string[] = [];
  const dirs = (dir: string) => {
    try {
      return fs
        .readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
    } catch {
      return [];
    }
  };
  const has = (file: string) => fs.existsSync(file);
  if (has(path.join(clientDir, 'corrections', 'index.html'))) found.push(CORRECTIONS_PATH);
  for (const slug of dirs(path.join(clientDir, 'article'))) {
    if (!except.has(articlePath(slug)) && has(path.join(clientDir, 'article', slug, 'index.html'))) found.push(articlePath(slug));
    if (!except.has(liveFeedPath(slug)) && has(path.join(clientDir, 'article', slug, 'live.json'))) found.push(liveFeedPath(slug));
  }
  for (const section of dirs(path.join(clientDir, 'section'))) {
    const base = path.join(clientDir, 'section', section);
    if (has(path.join(base, 'index.html'))) found.push(`/section/${section}`);
    if (has(path.join(base, 'rss.xml'))) found.push(`/section/${section}/rss.xml`);
    if (has(path.join(base, 'pages.json'))) found.push(listingManifestPath(section));
    for (const page of dirs(path.join(base, 'page'))) {
      if (has(path.join(base, 'page', page, 'index.html'))) found.push(`/section/${section}/page/${page}`);
    }
  }
  for (const kind of ['tag', 'author']) {
    for (const slug of dirs(path.join(clientDir, kind))) {
      const base = path.join(clientDir, kind, slug);
      if (has(path.join(base, 'index.html'))) found.push(`/${kind}/${slug}`);
      if (has(path.join(base, 'rss.xml'))) found.push(`/${kind}/${slug}/rss.xml`);
      if (has(path.join(base, 'pages.json'))) found.push(`/${kind}/${slug}/pages.json`);
      for (const page of dirs(path.join(base, 'page'))) {
        if (has(path.join(base, 'page', page, 'index.html'))) found.push(`/${kind}/${slug}/page/${page}`);
      }
    }
  }
  try {
    for (const name of fs.readdirSync(path.join(clientDir, 'sitemaps'))) found.push(`/sitemaps/${name}`);
  } catch {
    // No sitemaps folder yet.
  }
  return found.filter((publicPath) => isRegenerablePath(publicPath) && !except.has(publicPath));
}

const isPublic = (article: ArticleRecord | undefined): article is ArticleRecord => article?.status === 'published';

/** Newest first, as the store's 'recent' order: published date (else last update), then id. */
function byRecent(a: ArticleRecord, b: ArticleRecord): number {
  const da = a.publishedAt ?? a.updatedAt;
  const db = b.publishedAt ?? b.updatedAt;
  return da < db ? 1 : da > db ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** The list as it was before the changes, rebuilt from the list after them. */
function listBefore(
  after: readonly ArticleRecord[],
  changes: readonly ArticleChange[],
  inScope: (a: ArticleRecord) => boolean,
): ArticleRecord[] {
  const changed = new Set(changes.map((c) => (c.after ?? c.before)!.id));
  const list = after.filter((a) => !changed.has(a.id));
  for (const { before } of changes) if (isPublic(before) && inScope(before)) list.push(before);
  return list.sort(byRecent);
}

/**
 * A section's published list, newest first: an array, or a window of it whose other positions stand
 * for articles that are the same before and after a change (see sectionLists).
 */
export type SectionList = {
  readonly length: number;
  at(index: number): ArticleRecord | undefined;
  slice(start?: number, end?: number): ArticleRecord[];
};

/**
 * What a listing file's HTML is made of, as a string: its cards plus, on page 1, the page count and,
 * on an archive file, whether it is the newest one. Undefined when the file does not exist.
 */
export function listingFileFingerprint(
  list: SectionList,
  total: number,
  file: number,
  size: number,
  fingerprint: (a: ArticleRecord) => string,
): string | undefined {
  const slice = listingSlice(list.length, file, size);
  if (!slice) return undefined;
  return listingCardsFingerprint(list.slice(slice.offset, slice.offset + slice.limit), total, file, fingerprint);
}

/** listingFileFingerprint from the file's own cards (newest first), the section's page count and the file's number. */
export function listingCardsFingerprint(
  cards: readonly ArticleRecord[],
  total: number,
  file: number,
  fingerprint: (a: ArticleRecord) => string,
): string {
  const shown = cards.map(fingerprint).join('\n');
  return file === 1 ? `${total}\n${shown}` : `${file === total}\n${shown}`;
}

/** Stand for the articles outside sectionLists' window, which are the same before and after the changes. */
const SAME_NEWER = Object.freeze({}) as ArticleRecord;
const SAME_OLDER = Object.freeze({}) as ArticleRecord;

/**
 * `window` at position `newer` of a list `newer + window.length + older` long, the other positions
 * held by placeholders: nothing is allocated for them (at 100,000 articles a section is 12,500 long,
 * and padding real arrays made most of the garbage a burst of saves left).
 */
function windowedList(window: readonly ArticleRecord[], newer: number, older: number): SectionList {
  const length = newer + window.length + older;
  const at = (index: number) =>
    index < 0 || index >= length
      ? undefined
      : index < newer
        ? SAME_NEWER
        : index < newer + window.length
          ? window[index - newer]
          : SAME_OLDER;
  return {
    length,
    at,
    slice(start = 0, end = length) {
      const out: ArticleRecord[] = [];
      for (let i = Math.max(0, start); i < Math.min(end, length); i++) out.push(at(i)!);
      return out;
    },
  };
}

/**
 * A section's published list before and after the changes (newest first, full length), read only
 * around the changed articles: the articles newer and older than all of them are the same in both
 * lists, so they are left out and stood for by placeholders, which compare equal in every
 * fingerprint (placeholders for the newer ones only when the count did not change, since otherwise
 * the files shift under them). Listing the whole section on every save grew with the archive
 * (docs/performance.md, 2026-11-25); this reads a few positions by count (the store answers a published date range
 * by binary search) and lists only the window. Falls back to the whole section whenever a check of
 * the window fails (a date the store could not place by position).
 */
export async function sectionLists(
  store: Store,
  section: Section,
  changes: readonly ArticleChange[],
): Promise<{ before: SectionList; after: SectionList }> {
  return scopedLists(store, { statuses: ['published'], section }, (a) => a.section === section, changes);
}

/**
 * sectionLists for any published listing: the store filter that lists it (a section, a tag, an
 * author) and the same test on one record.
 */
export async function scopedLists(
  store: Store,
  scope: ArticleFilter,
  inScope: (a: ArticleRecord) => boolean,
  changes: readonly ArticleChange[],
): Promise<{ before: SectionList; after: SectionList }> {
  const inSection = (a: ArticleRecord | undefined): a is ArticleRecord => isPublic(a) && inScope(a);
  const filter = { ...scope, statuses: ['published'] as const };
  const whole = async () => {
    const after = await store.articles.list(filter, { offset: 0, limit: await store.articles.count(filter) }, 'recent');
    return { before: listBefore(after, changes, inScope), after };
  };
  const afters = changes.map((c) => c.after).filter(inSection);
  const befores = changes.map((c) => c.before).filter(inSection);
  const margin = afters.length + befores.length + 1;
  const count = await store.articles.count(filter);
  const countBefore = count - afters.length + befores.length;
  const dateOf = (a: ArticleRecord) => a.publishedAt ?? a.updatedAt;
  // Articles older than every changed one: at least those the store dates before it, less the changed ones.
  let older = count;
  // ...and newer than every changed one (only used when the count stays).
  let newer = countBefore === count ? count : 0;
  for (const article of [...afters, ...befores]) {
    const time = Date.parse(dateOf(article));
    if (!Number.isFinite(time)) return whole();
    const atOrAfter = await store.articles.count({ ...filter, dateFrom: new Date(time).toISOString() });
    older = Math.min(older, count - atOrAfter - margin);
    if (newer > 0)
      newer = Math.min(newer, (await store.articles.count({ ...filter, dateFrom: new Date(time + 1).toISOString() })) - margin);
  }
  older = Math.max(0, older);
  newer = Math.max(0, newer);
  const window = await store.articles.list(filter, { offset: newer, limit: Math.max(0, count - older - newer) }, 'recent');
  // The window must hold every changed article, and its edges (where placeholders begin) must be unchanged articles beyond all of them.
  const changed = new Set(changes.map((c) => (c.after ?? c.before)!.id));
  const ids = new Set(window.map((a) => a.id));
  const first = window[0];
  const last = window.at(-1);
  const inside = (a: ArticleRecord) =>
    (newer === 0 || (first !== undefined && !changed.has(first.id) && byRecent(first, a) < 0)) &&
    (older === 0 || (last !== undefined && !changed.has(last.id) && byRecent(a, last) < 0));
  if (window.length !== count - older - newer || !afters.every((a) => ids.has(a.id) && inside(a)) || !befores.every(inside)) return whole();
  const beforeWindow = listBefore(window, changes, inScope);
  return { before: windowedList(beforeWindow, newer, older), after: windowedList(window, newer, older) };
}

/**
 * Listing files (1 = page 1, n >= 2 = archive file n) whose HTML differs between two versions of a
 * section's list (newest first). A file's HTML is its cards plus, on page 1, the page count and, on
 * an archive file, whether it is the newest one. Files are filled from the oldest article, so only
 * the files from the oldest difference onwards can change: a new article touches page 1 and the
 * newest archive file (and the one before it when a new file opens), whatever the archive's size.
 */
export function changedListingFiles(
  before: SectionList,
  after: SectionList,
  size: number,
  fingerprint: (a: ArticleRecord) => string,
): number[] {
  const totalBefore = countListingPages(before.length, size);
  const totalAfter = countListingPages(after.length, size);
  // The oldest position (counted from the oldest article) at which the lists differ.
  let first = Math.max(0, Math.min(before.length, after.length) - size);
  for (let j = 0; j < first; j++) {
    const a = before.at(before.length - 1 - j)!;
    const b = after.at(after.length - 1 - j)!;
    if (a !== b && fingerprint(a) !== fingerprint(b)) {
      first = j;
      break;
    }
  }
  const fileOf = (list: SectionList, total: number, file: number) => listingFileFingerprint(list, total, file, size, fingerprint);
  const candidates = new Set<number>([1, totalBefore, totalAfter]);
  for (let file = Math.floor(first / size) + 2; file <= Math.max(totalBefore, totalAfter); file++) candidates.add(file);
  return [...candidates].sort((a, b) => a - b).filter((file) => fileOf(before, totalBefore, file) !== fileOf(after, totalAfter, file));
}

/** Whether a feed's items (the first FEED_SIZE of a list) read differently; an article left as it was is the same object in both lists. */
export function feedChanged(before: SectionList, after: SectionList): boolean {
  for (let i = 0; i < FEED_SIZE; i++) {
    const a = before.at(i);
    const b = after.at(i);
    if (a !== b && (a === undefined || b === undefined || feedFingerprint(a) !== feedFingerprint(b))) return true;
  }
  return false;
}

/** What a listing card shows: the loader hands the view exactly the summary. */
export const cardFingerprint = (article: ArticleRecord) => JSON.stringify(toSummary(article));

/** What a tag or author listing card shows: the card, and the tags its page's heading may take its spelling from. */
export const termCardFingerprint = (article: ArticleRecord) => `${cardFingerprint(article)}\n${JSON.stringify(article.tags ?? [])}`;

/** What a tag or author listing file is made of: a section file's, with termCardFingerprint, and on page 1 the article count it prints. */
export function termListingFingerprint(cards: readonly ArticleRecord[], total: number, file: number, count: number): string {
  const cardsPart = listingCardsFingerprint(cards, total, file, termCardFingerprint);
  return file === 1 ? `${cardsPart}\n#${count}` : cardsPart;
}

/** What the article page shows: the loader hands the view the whole record (without its origin). */
export function pageFingerprint(article: ArticleRecord): string {
  const { origin: _internal, ...shown } = article;
  return JSON.stringify(shown);
}

/**
 * The public paths a batch of article writes changes, computed against the store after the writes:
 * article pages (old and new slug), the listing pages whose cards or page count moved, the feeds
 * whose first items moved, the sitemaps. Writes that readers cannot see (drafts, scheduled) give none.
 * Ordered by urgency: the articles, then their listings, then feeds and sitemaps.
 */
export async function computeAffectedPaths(store: Store, changes: readonly ArticleChange[], now = Date.now()): Promise<string[]> {
  const visible = changes.filter((c) => isPublic(c.before) || isPublic(c.after));
  if (visible.length === 0) return [];
  const articles = new Set<string>();
  const listings: string[] = [];
  const machine: string[] = [];

  for (const { before, after } of visible) {
    const same = isPublic(before) && isPublic(after) && before.slug === after.slug && pageFingerprint(before) === pageFingerprint(after);
    if (same) continue;
    if (isPublic(before)) articles.add(articlePath(before.slug));
    if (isPublic(after)) articles.add(articlePath(after.slug));
    // A live article's live.json comes and goes with its page (published, unpublished, a new slug).
    const moved = !isPublic(before) || !isPublic(after) || before.slug !== after.slug;
    if (moved && (await store.live.getCoverage((after ?? before)!.id))) {
      if (isPublic(before)) articles.add(liveFeedPath(before.slug));
      if (isPublic(after)) articles.add(liveFeedPath(after.slug));
    }
  }

  const sections = new Set<Section>();
  for (const { before, after } of visible) {
    if (isPublic(before)) sections.add(before.section);
    if (isPublic(after)) sections.add(after.section);
  }
  for (const section of SECTIONS) {
    if (!sections.has(section)) continue;
    const { before, after } = await sectionLists(store, section, visible);
    for (const page of changedListingFiles(before, after, SECTION_PAGE_SIZE, cardFingerprint))
      listings.push(sectionPagePath(section, page));
    if (countListingPages(before.length, SECTION_PAGE_SIZE) !== countListingPages(after.length, SECTION_PAGE_SIZE))
      machine.push(listingManifestPath(section));
    if (feedChanged(before, after)) machine.push(sectionFeedPath(section));
  }

  const rules = await readTagRules(store);
  const terms = await changedTermFiles(store, visible, rules);
  listings.push(...terms.listings);
  machine.push(...terms.machine);

  // Related reading (issue 35): the pages whose list showed, or may now show, a changed article.
  for (const { before, after } of visible) {
    if (relatedFingerprint(before, rules) === relatedFingerprint(after, rules)) continue;
    for (const state of [before, after])
      if (isPublic(state)) for (const page of await listShowingPages(store, state, rules)) articles.add(articlePath(page.slug));
  }

  const allAfter = await listPublished(store, undefined, FEED_SIZE + visible.length);
  const allBefore = listBefore(allAfter, visible, () => true);
  if (feedChanged(allBefore, allAfter)) machine.push(RSS_PATH);

  const entry = (article: ArticleRecord | undefined, fingerprint: (a: ArticleRecord) => string) =>
    isPublic(article) ? fingerprint(article) : '';
  const months = new Set<string>();
  for (const { before, after } of visible) {
    if (
      entry(before, sitemapFingerprint) === entry(after, sitemapFingerprint) &&
      (!isPublic(before) || periodOf(before) === periodOf(after!))
    )
      continue;
    if (isPublic(before)) months.add(periodOf(before));
    if (isPublic(after)) months.add(periodOf(after));
  }
  // The index names each month with its newest change, so it moves with any of its children.
  if (months.size > 0) machine.push(SITEMAP_PATH, ...[...months].sort().map(periodSitemapPath));
  const news = (article: ArticleRecord | undefined) => (isPublic(article) && isNewsworthy(article, now) ? newsFingerprint(article) : '');
  if (visible.some((c) => news(c.before) !== news(c.after))) machine.push(NEWS_SITEMAP_PATH);

  // /corrections lists each correction with its article's title and slug.
  const corrections = (article: ArticleRecord | undefined) =>
    isPublic(article) && article.corrections?.length ? JSON.stringify([article.slug, article.title, article.corrections]) : '';
  if (visible.some((c) => corrections(c.before) !== corrections(c.after))) machine.push(CORRECTIONS_PATH);

  // Page 1 of each listing goes first: it is what readers open.
  const firstPages = listings.filter((p) => !p.includes('/page/'));
  const otherPages = listings.filter((p) => p.includes('/page/'));
  return [...articles, ...firstPages, ...machine, ...otherPages];
}

/** The tag (with a page) and author slugs of a published article. */
function termsOf(article: ArticleRecord | undefined, rules: TagRules): Array<{ kind: TermKind; slug: string }> {
  if (!isPublic(article)) return [];
  const terms: Array<{ kind: TermKind; slug: string }> = slugifyTags(article.tags)
    .filter((slug) => mayHavePage('tag', slug, rules))
    .map((slug) => ({ kind: 'tag' as const, slug }));
  const author = slugifyTerm(article.authorName);
  if (author) terms.push({ kind: 'author', slug: author });
  return terms;
}

/** The spelling a term's page 1 and feed take from the newest article of a list (placeholders and empty lists give ''). */
function newestName(kind: TermKind, slug: string, list: SectionList): string {
  const newest = list.at(0);
  if (!newest || newest === SAME_NEWER || newest === SAME_OLDER) return '';
  return kind === 'author' ? newest.authorName : (newest.tags.find((tag) => slugifyTerm(tag) === slug) ?? slug);
}

/**
 * The files of the tag and author archives (issue 35) a batch of changes touches, found as for a
 * section: each archive the changed articles were or are in, read around them (scopedLists).
 */
async function changedTermFiles(
  store: Store,
  changes: readonly ArticleChange[],
  rules: TagRules,
): Promise<{ listings: string[]; machine: string[] }> {
  const listings: string[] = [];
  const machine: string[] = [];
  const terms = new Map<string, { kind: TermKind; slug: string }>();
  for (const { before, after } of changes)
    for (const term of [...termsOf(before, rules), ...termsOf(after, rules)]) terms.set(`${term.kind}:${term.slug}`, term);
  let archivesChanged = false;
  for (const { kind, slug } of [...terms.values()].sort((a, b) => (`${a.kind}:${a.slug}` < `${b.kind}:${b.slug}` ? -1 : 1))) {
    const inScope =
      kind === 'tag' ? (a: ArticleRecord) => slugifyTags(a.tags).includes(slug) : (a: ArticleRecord) => slugifyTerm(a.authorName) === slug;
    const { before, after } = await scopedLists(store, termFilter(kind, slug), inScope, changes);
    const base = termPath(kind, slug);
    const files = changedListingFiles(before, after, TERM_PAGE_SIZE, termCardFingerprint);
    // Page 1 prints the count and its heading the newest spelling.
    if (!files.includes(1) && (before.length !== after.length || newestName(kind, slug, before) !== newestName(kind, slug, after)))
      files.unshift(1);
    for (const file of files) listings.push(listingFilePath(base, file));
    const appeared = (before.length === 0) !== (after.length === 0);
    if (appeared) archivesChanged = true;
    if (appeared || countListingPages(before.length, TERM_PAGE_SIZE) !== countListingPages(after.length, TERM_PAGE_SIZE))
      machine.push(listingManifestPath(base));
    if (appeared || feedChanged(before, after) || newestName(kind, slug, before) !== newestName(kind, slug, after))
      machine.push(termFeedPath(kind, slug));
  }
  if (archivesChanged) machine.push(ARCHIVES_SITEMAP_PATH);
  return { listings, machine };
}

/**
 * The files a live coverage write (an update posted, edited or deleted, key points, a start or an end)
 * changes for a published article: its page, its live.json and the feeds whose items include it. A
 * constant number whatever the archive's size: nothing else shows the updates.
 */
export async function computeLivePaths(store: Store, article: ArticleRecord): Promise<string[]> {
  const current = await store.articles.get(article.id);
  if (!isPublic(current)) return [];
  const paths = [articlePath(current.slug), liveFeedPath(current.slug)];
  const inFeed = async (section?: Section) => (await listPublished(store, section, FEED_SIZE)).some((a) => a.id === current.id);
  if (await inFeed()) paths.push(RSS_PATH);
  if (await inFeed(current.section)) paths.push(sectionFeedPath(current.section));
  return paths;
}

/** The slugs of every published article grouped by search bundle for the day `today` (search-index.ts). */
export async function listSearchBundles(store: Store, today: string): Promise<Map<string, string[]>> {
  const planner = searchBundlePlanner(today);
  const slice = timeSlicer();
  for (const article of await listPublished(store)) {
    planner.add(article);
    await slice();
  }
  return planner.finish();
}
