/**
 * What each served page was rendered from, as a fingerprint per page, kept in the render state beside
 * the client folder (OUT_DIR/render-state.json) so `npm run rebuild` renders only the pages whose inputs changed.
 */
import fs from 'node:fs';
import { createHash } from 'node:crypto';
import { SECTIONS } from '../../schemas/common.ts';
import type { ArticleRecord } from '../../schemas/article.ts';
import { LIVE_FEED_SIZE, type LiveFeed } from '../../schemas/live.ts';
import type { FeedItem, MachineFile, SitemapEntry } from '../../schemas/pages.ts';
import type { Store } from '../../store/types.ts';
import { countListingPages, listingFilePath, listingManifestPath, listingSlice } from '../../lib/pagination.ts';
import { SECTION_PAGE_SIZE, sectionPagePath } from '../page-data.ts';
import type { JournalEntry } from './render-journal.ts';
import { EMPTY_TAG_RULES, termPath, type TagRules } from '../../schemas/taxonomy.ts';
import { linkTerms, listTermsWithPages, TERM_PAGE_SIZE, termFilter, termNameOn } from '../archive-pages.ts';
import { computeAllRelated } from '../related.ts';
import { readTagRules } from '../tag-rules.ts';
import { liveFeedPath, toLiveFeed } from '../live-feed.ts';
import {
  pagesDrawnWith,
  readRenderStateHeader,
  readRenderStatePages,
  renderStateFileFor,
  writeRenderStateFile,
  type PageState,
} from './render-state.ts';
import { FEED_SIZE, SITEMAP_PATH, feedFingerprint, listPublished, periodOf, periodSitemapPath, sitemapFingerprint } from './feeds.ts';
import { articlePath, CORRECTIONS_PATH, fileForPath, machinePaths } from './paths.ts';
import { cardFingerprint, listingCardsFingerprint, listingFileFingerprint, termListingFingerprint } from './listing-changes.ts';

/** Input fingerprint of a file rendered on every rebuild (feeds, news sitemap, robots: small, time- or config-dependent). */
export const ALWAYS = '*';

/**
 * What a rebuild recorded: the build fingerprint (another one means a new bundle), the render fingerprint
 * (another one means every page drawn again), the store, and each page's input and stat.
 */
export type RenderState = {
  build: string;
  render?: string | undefined;
  indexer?: string | undefined;
  storeId: string;
  pages: Record<string, PageState>;
};
export type PageInput = { i: string; p?: string; t?: string };

export { renderStateFileFor };

/**
 * The rebuild's record in the render state, or undefined when no rebuild recorded one. Its `render` is
 * what the pages were drawn with: a server that drew them all since (drawnWith) is newer than the record.
 */
export function readRenderState(file: string): RenderState | undefined {
  const header = readRenderStateHeader(file);
  if (!header.rebuild) return undefined;
  const render = pagesDrawnWith(header);
  return { ...header.rebuild, ...(render === undefined ? {} : { render }), pages: readRenderStatePages(file) };
}

/** Writes the rebuild's record atomically (temp + rename); the manifest and the day tier stay. */
export function writeRenderState(file: string, state: RenderState): void {
  const { pages: _pages, ...rebuild } = state;
  writeRenderStateFile(file, (header) => ({ ...header, rebuild }), state.pages);
}

const hash = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 22);

/**
 * The input fingerprint of an article page (what planRender compares): the record it shows, its
 * related reading's cards, which of its tags are linked and its live coverage, if any (issue 35).
 */
export function articlePageInput(
  article: ArticleRecord,
  shown: { related?: readonly ArticleRecord[]; rules?: TagRules; live?: LiveFeed | undefined } = {},
  record = articleInputFingerprint(article),
): string {
  const { related = [], rules = EMPTY_TAG_RULES, live } = shown;
  const links = linkTerms(article, rules);
  const live_ = live ? `\n${JSON.stringify(live)}` : '';
  return hash(`${record}\n${related.map(cardFingerprint).join('\n')}\n${JSON.stringify(links)}${live_}`);
}

/**
 * The input fingerprint of a tag or author listing file: listingPageInput's, with each card's tags (its
 * heading's spelling) and, on page 1, the count.
 */
export function termPageInput(cards: readonly ArticleRecord[], total: number, file: number, count: number): string {
  return hash(termListingFingerprint(cards, total, file, count));
}

/**
 * The input fingerprint of a listing file from the cards it shows (newest first), the section's page
 * count and its number: the same string computePageInputs hashes from the whole section's list.
 */
export function listingPageInput(cards: readonly ArticleRecord[], total: number, file: number): string {
  return hash(listingCardsFingerprint(cards, total, file, cardFingerprint));
}

/** The input fingerprint of a listing's pages.json: its page count. */
const manifestInput = (pages: number) => hash(String(pages));

/** The input fingerprint of a tag or author feed: the archive's name and its newest FEED_SIZE items. */
const termFeedInput = (name: string, newest: readonly Omit<FeedItem, 'status'>[]) =>
  hash(`${name}\n${newest.slice(0, FEED_SIZE).map(feedFingerprint).join('\n')}`);

/** The input fingerprint of a month's sitemap: its entries, newest first. */
const monthSitemapInput = (entries: readonly SitemapEntry[]) => hash(entries.map(sitemapFingerprint).join('\n'));

/** The input fingerprint of the sitemap index: each month with its newest update. */
const sitemapIndexInput = (periods: readonly { period: string; lastmod: string }[]) =>
  hash(
    periods
      .map(({ period, lastmod }) => `${period} ${lastmod}`)
      .sort()
      .join('\n'),
  );

/**
 * The input fingerprint of a machine file the worker drew (for the render journal), the same one
 * computePageInputs gives its path; undefined for the files drawn on every rebuild.
 */
export function machineFileInput(file: MachineFile): string | undefined {
  switch (file.kind) {
    case 'pages-json':
      return manifestInput(file.manifest.pages);
    case 'rss':
      return file.term ? termFeedInput(file.term.name, file.articles) : undefined;
    case 'month-sitemap':
      return monthSitemapInput(file.articles);
    case 'sitemap-index':
      return sitemapIndexInput(file.periods);
    case 'live-json':
      return hash(JSON.stringify(file.feed));
    default:
      return undefined;
  }
}

/**
 * An article page's input: what the page shows of its record (pageFingerprint), except the body,
 * which the record's `version` stands for. The store bumps the version on every replace (and a
 * restore from the trash takes a new one), so one article never has two bodies under one version;
 * reading every body instead (a file each on lowdb; docs/performance.md, 2026-11-25 entry on the one-change rebuild) was most of what an
 * incremental rebuild cost before it rendered anything. The keys are read without the body's getter.
 */
export function articleInputFingerprint(article: ArticleRecord): string {
  const shown: Record<string, unknown> = {};
  // Sorted: a record listed and the same record read by slug may hold their keys in another order.
  for (const key of (Object.keys(article) as (keyof ArticleRecord)[]).sort())
    if (key !== 'bodyHtml' && key !== 'origin') shown[key] = article[key];
  return JSON.stringify(shown);
}

/**
 * The input fingerprint of every public path the data has: an article page from its record and version, a
 * listing file from its cards and page count, a month's sitemap from its entries; feeds, the news
 * sitemap and robots.txt are always rendered (ALWAYS). The same loaders feed the views, so equal
 * fingerprints mean equal HTML for the same build.
 */
export async function computePageInputs(store: Store): Promise<Map<string, PageInput>> {
  const inputs = new Map<string, PageInput>();
  const published = await listPublished(store);
  const rules = await readTagRules(store);
  const related = computeAllRelated(published, rules);
  const live = await loadLiveFeeds(store, published);
  for (const article of published) {
    const feed = live.get(article.id);
    const record = articleInputFingerprint(article);
    const input = articlePageInput(article, { related: related.get(article.id) ?? [], rules, live: feed }, record);
    // What search indexes of the page is its own record: the rest (related reading, live coverage) is data-pagefind-ignore.
    inputs.set(articlePath(article.slug), { i: input, p: periodOf(article), t: hash(record) });
    // The page shows every update, live.json the newest LIVE_FEED_SIZE (as toLiveFeed limits them).
    if (feed)
      inputs.set(liveFeedPath(article.slug), {
        i: machineFileInput({ kind: 'live-json', feed: { ...feed, updates: feed.updates.slice(0, LIVE_FEED_SIZE) } })!,
      });
  }
  // Tag and author archives: each one's list read by its index (a few per term), fingerprinted like a section's.
  for (const term of await listTermsWithPages(store)) {
    const list = await store.articles.list(termFilter(term.kind, term.slug), { offset: 0, limit: term.count }, 'recent');
    const total = countListingPages(list.length, TERM_PAGE_SIZE);
    const base = termPath(term.kind, term.slug);
    for (let file = 1; file <= total; file++) {
      const slice = listingSlice(list.length, file, TERM_PAGE_SIZE)!;
      const cards = list.slice(slice.offset, slice.offset + slice.limit);
      inputs.set(listingFilePath(base, file), { i: termPageInput(cards, total, file, list.length) });
    }
    inputs.set(listingManifestPath(base), { i: manifestInput(total) });
    inputs.set(`${base}/rss.xml`, { i: termFeedInput(termNameOn(term.kind, term.slug, list[0]), list) });
  }
  for (const section of SECTIONS) {
    // The global newest-first order restricted to one section is that section's order (the sort is total).
    const list = published.filter((a) => a.section === section);
    const total = countListingPages(list.length, SECTION_PAGE_SIZE);
    for (let file = 1; file <= total; file++) {
      inputs.set(sectionPagePath(section, file), {
        i: hash(listingFileFingerprint(list, total, file, SECTION_PAGE_SIZE, cardFingerprint)!),
      });
    }
    inputs.set(listingManifestPath(section), { i: manifestInput(total) });
  }
  const months = new Map<string, ArticleRecord[]>();
  for (const article of published) {
    const period = periodOf(article);
    const list = months.get(period);
    if (list) list.push(article);
    else months.set(period, [article]);
  }
  const index: { period: string; lastmod: string }[] = [];
  for (const [period, articles] of months) {
    inputs.set(periodSitemapPath(period), { i: monthSitemapInput(articles) });
    index.push({ period, lastmod: articles.reduce((newest, a) => (a.updatedAt > newest ? a.updatedAt : newest), '') });
  }
  for (const machine of machinePaths()) if (!inputs.has(machine)) inputs.set(machine, { i: ALWAYS });
  // /corrections (one small page of every correction) is rendered every time, like the feeds.
  inputs.set(CORRECTIONS_PATH, { i: ALWAYS });
  inputs.set(SITEMAP_PATH, { i: sitemapIndexInput(index) });
  return inputs;
}

/** Each published live article's feed with every update, by article id (few articles are ever live). */
async function loadLiveFeeds(store: Store, published: readonly ArticleRecord[]): Promise<Map<string, LiveFeed>> {
  const ids = new Set(published.map((a) => a.id));
  const feeds = new Map<string, LiveFeed>();
  for (const coverage of await store.live.listCoverage()) {
    if (ids.has(coverage.articleId)) feeds.set(coverage.articleId, toLiveFeed(coverage, await store.live.listUpdates(coverage.articleId)));
  }
  return feeds;
}

/** The stat a page state records for a file, or undefined when it is missing. */
export function statOf(clientDir: string, publicPath: string): { m: number; s: number } | undefined {
  try {
    const stat = fs.statSync(fileForPath(clientDir, publicPath));
    return { m: stat.mtimeMs, s: stat.size };
  } catch {
    return undefined;
  }
}

/**
 * Which paths to render (input changed, never rendered, file missing or changed by something else),
 * which to adopt as they are (the server's worker wrote the file from today's input: the render
 * journal names its input and stat) and which files to remove (pages of the previous state or on
 * disk that the data no longer has).
 */
export function planRender(
  inputs: ReadonlyMap<string, PageInput>,
  previous: RenderState['pages'],
  onDisk: readonly string[],
  clientDir: string,
  journal: ReadonlyMap<string, JournalEntry> = new Map(),
): { render: string[]; adopt: string[]; remove: string[] } {
  const render: string[] = [];
  const adopt: string[] = [];
  const matches = (stat: { m: number; s: number } | undefined, seen: { m: number; s: number }) =>
    stat !== undefined && stat.m === seen.m && stat.s === seen.s;
  for (const [publicPath, input] of inputs) {
    if (input.i === ALWAYS) {
      render.push(publicPath);
      continue;
    }
    const before = previous[publicPath];
    const served = journal.get(publicPath);
    const stat = (before && before.i === input.i) || served?.i === input.i ? statOf(clientDir, publicPath) : undefined;
    if (before && before.i === input.i && matches(stat, before)) continue;
    if (served && served.i === input.i && matches(stat, served)) adopt.push(publicPath);
    else render.push(publicPath);
  }
  const remove = [...new Set([...Object.keys(previous), ...onDisk])].filter((p) => !inputs.has(p));
  return { render, adopt, remove };
}
