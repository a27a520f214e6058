/**
 * Data loaders of the tag and author archives (issue 35): `/tag/{slug}` and `/author/{slug}`, paged
 * like sections (files numbered from the oldest article), their pages.json, and the paths they have.
 */
import type { ArticleFilter, ArticleRecord } from '../schemas/article.ts';
import type { TermPageData } from '../schemas/pages.ts';
import { hasTagPage, resolveTagSlug, slugifyTerm, termPath, termSlugSchema, type TagRules, type TermKind } from '../schemas/taxonomy.ts';
import type { Store } from '../store/types.ts';
import { countListingPages, listingFilePath, listingManifestPath, listingSlice } from '../lib/pagination.ts';
import { toSummary } from './articles.ts';
import { useReadStore } from './runtime.ts';
import { getConfig } from '../config.ts';
import { readTagRules } from './tag-rules.ts';
import { DEFAULT_PAGE_SIZE } from '../schemas/common.ts';

/** Archives page 12 cards at a time, as sections do (SECTION_PAGE_SIZE). */
export const TERM_PAGE_SIZE = DEFAULT_PAGE_SIZE;

/** The store filter of a term's published articles. */
export function termFilter(kind: TermKind, slug: string): ArticleFilter {
  return kind === 'tag' ? { statuses: ['published'], tag: slug } : { statuses: ['published'], author: slug };
}

/** The spelling of a term on an article (its tag, or its author name). */
export function termNameOn(kind: TermKind, slug: string, article: ArticleRecord | undefined): string {
  if (!article) return slug;
  if (kind === 'author') return article.authorName;
  return article.tags.find((tag) => slugifyTerm(tag) === slug) ?? slug;
}

/** Whether a term slug may have a page: a well-formed slug, and for a tag one not merged away or hidden. */
export function mayHavePage(kind: TermKind, slug: string, rules: TagRules): boolean {
  if (!termSlugSchema.safeParse(slug).success) return false;
  return kind === 'author' || hasTagPage(rules, slug);
}

/** The heading and meta description of a term's pages. */
function describeTerm(kind: TermKind, name: string): { title: string; description: string } {
  return kind === 'tag'
    ? { title: name, description: `Every story tagged ${name}, newest first: reporting, analysis and updates from Meridian News.` }
    : { title: name, description: `Every story by ${name} for Meridian News, newest first.` };
}

/**
 * A term's listing file with what it was made from (its records, newest first, and the page count),
 * or undefined when it has no such file: a tag without a page, a term with no published article, a
 * file out of range.
 */
export async function readTermPage(
  kind: TermKind,
  slug: string,
  page: number,
): Promise<{ data: TermPageData; records: ArticleRecord[]; totalPages: number; count: number } | undefined> {
  const store = await useReadStore();
  if (!mayHavePage(kind, slug, kind === 'tag' ? await readTagRules(store) : EMPTY)) return undefined;
  const filter = termFilter(kind, slug);
  const count = await store.articles.count(filter);
  if (count === 0) return undefined;
  const slice = listingSlice(count, page, TERM_PAGE_SIZE);
  if (!slice) return undefined;
  const totalPages = countListingPages(count, TERM_PAGE_SIZE);
  const records = await store.articles.list(filter, slice, 'recent');
  const name = termNameOn(kind, slug, records[0]);
  const data: TermPageData = {
    kind,
    slug,
    name,
    ...describeTerm(kind, name),
    page,
    ...(page === 1 ? { totalPages, count } : {}),
    newestArchive: page >= 2 && page === totalPages,
    articles: records.map(toSummary),
  };
  return { data, records, totalPages, count };
}

const EMPTY: TagRules = { merged: {}, hidden: {} };

/** A term's pages.json (its page count), or undefined when it has no page. */
export async function loadTermManifest(kind: TermKind, slug: string): Promise<{ pages: number } | undefined> {
  const read = await readTermPage(kind, slug, 1);
  return read ? { pages: read.totalPages } : undefined;
}

/** Every tag and author slug with a page, with its count (tags hidden or merged away have none). */
export async function listTermsWithPages(store: Store): Promise<Array<{ kind: TermKind; slug: string; name: string; count: number }>> {
  const rules = await readTagRules(store);
  const out: Array<{ kind: TermKind; slug: string; name: string; count: number }> = [];
  for (const kind of ['tag', 'author'] as const)
    for (const term of await store.articles.terms(kind)) if (mayHavePage(kind, term.slug, rules)) out.push({ kind, ...term });
  return out;
}

/** Every file of a term's archive while it has `count` articles: its listing files, its feed and pages.json. */
export function termPagePaths(kind: TermKind, slug: string, count = 1): string[] {
  const base = termPath(kind, slug);
  const pages = countListingPages(count, TERM_PAGE_SIZE);
  const files = Array.from({ length: pages }, (_, i) => listingFilePath(base, i + 1));
  return [...files, `${base}/rss.xml`, listingManifestPath(base)];
}

/** Every listing path of every term with a page (the build's getStaticPaths; none without PRERENDER_DATA_PAGES). */
export async function listTermPaths(kind: TermKind): Promise<Array<{ slug: string; page: number }>> {
  if (!getConfig().PRERENDER_DATA_PAGES) return [];
  const store = await useReadStore();
  const out: Array<{ slug: string; page: number }> = [];
  for (const term of await listTermsWithPages(store)) {
    if (term.kind !== kind) continue;
    const pages = countListingPages(term.count, TERM_PAGE_SIZE);
    for (let page = 1; page <= pages; page++) out.push({ slug: term.slug, page });
  }
  return out;
}

/** Links of an article's tags (text -> page) and its author page, as the article page shows them. */
export function linkTerms(article: ArticleRecord, rules: TagRules): { tagLinks: Record<string, string>; authorHref?: string } {
  const tagLinks: Record<string, string> = {};
  for (const tag of article.tags) {
    const slug = slugifyTerm(tag);
    if (slug && hasTagPage(rules, slug)) tagLinks[tag] = termPath('tag', slug);
  }
  const author = slugifyTerm(article.authorName);
  return author ? { tagLinks, authorHref: termPath('author', author) } : { tagLinks };
}

/**
 * Where an address of a merged tag now lives: its page 1 or feed at the tag it was merged into (an
 * archive file number means nothing there, so it leads to page 1); undefined for any other address.
 */
export function mergedTagLocation(rules: TagRules, pathname: string): string | undefined {
  const match = /^\/tag\/([a-z0-9-]+)(\/rss\.xml|\/pages\.json|\/page\/[0-9]+)?\/?$/.exec(pathname);
  if (!match || !rules.merged[match[1]!]) return undefined;
  const target = resolveTagSlug(rules, match[1]!);
  if (!target) return undefined;
  const suffix = match[2] === '/rss.xml' || match[2] === '/pages.json' ? match[2] : '';
  return `${termPath('tag', target.slug)}${suffix}`;
}
