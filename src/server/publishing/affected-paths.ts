/** Which public paths a batch of article changes, or a live coverage write, affects. */
import { SECTIONS, type Section } from '../../schemas/common.ts';
import type { ArticleRecord } from '../../schemas/article.ts';
import type { Store } from '../../store/types.ts';
import type { ArticleChange } from '../runtime.ts';
import { SECTION_PAGE_SIZE, sectionPagePath } from '../page-data.ts';
import { countListingPages, listingFilePath, listingManifestPath } from '../../lib/pagination.ts';
import {
  ARCHIVES_SITEMAP_PATH,
  NEWS_SITEMAP_PATH,
  periodOf,
  periodSitemapPath,
  RSS_PATH,
  SITEMAP_PATH,
  FEED_SIZE,
  isNewsworthy,
  listPublished,
  newsFingerprint,
  sectionFeedPath,
  sitemapFingerprint,
  termFeedPath,
} from './feeds.ts';
import { mayHavePage, TERM_PAGE_SIZE, termFilter } from '../archive-pages.ts';
import { listShowingPages, relatedFingerprint } from '../related.ts';
import { readTagRules } from '../tag-rules.ts';
import { slugifyTags, slugifyTerm, termPath, type TagRules, type TermKind } from '../../schemas/taxonomy.ts';
import { liveFeedPath } from '../live-feed.ts';
import { articlePath, CORRECTIONS_PATH } from './paths.ts';
import {
  cardFingerprint,
  changedListingFiles,
  feedChanged,
  isPublic,
  listBefore,
  SAME_NEWER,
  SAME_OLDER,
  scopedLists,
  sectionLists,
  termCardFingerprint,
  type SectionList,
} from './listing-changes.ts';

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
