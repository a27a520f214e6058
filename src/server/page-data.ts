/** Data loaders for the reader pages: what each prerendered route (and its on-demand twin) renders, read from the store. */
import { DEFAULT_PAGE_SIZE, SECTIONS, sectionSchema, type Section } from '../schemas/common.ts';
import type { ArticleRecord } from '../schemas/article.ts';
import type { ArticlePageData, SectionPageData } from '../schemas/pages.ts';
import { toArticle, toSummary } from './articles.ts';
import { useReadStore } from './runtime.ts';
import { getConfig } from '../config.ts';
import type { TagRules } from '../schemas/taxonomy.ts';
import { listRelated } from './related.ts';
import { readTagRules } from './tag-rules.ts';
import { linkTerms } from './archive-pages.ts';
import { countListingPages, listingFilePath, listingSlice } from '../lib/pagination.ts';
import { loadLiveFeed } from './live-feed.ts';

/** Readers page through a section 12 cards at a time (docs/product.md, Limits). */
export const SECTION_PAGE_SIZE = DEFAULT_PAGE_SIZE;

/** Title and meta description of every section listing. */
export const SECTION_INFO: Record<Section, { title: string; description: string }> = {
  world: {
    title: 'World News',
    description:
      'Breaking news and in-depth reporting from every region of the world: diplomacy, conflict, elections and the stories shaping our planet.',
  },
  business: {
    title: 'Business',
    description: 'Markets, companies, the economy and the people who move them: business news and analysis you can act on.',
  },
  politics: {
    title: 'Politics',
    description: 'Campaigns, policy and power: clear reporting on governments, legislatures and the decisions that affect your life.',
  },
  tech: {
    title: 'Technology',
    description: 'Artificial intelligence, gadgets, startups and the digital economy: the technology news that matters, explained.',
  },
  sports: {
    title: 'Sports',
    description: 'Scores, transfers, championships and the stories behind them: sports coverage from around the globe.',
  },
  culture: {
    title: 'Culture',
    description: 'Film, music, books, art and ideas: reviews, interviews and features from the world of culture.',
  },
  opinion: {
    title: 'Opinion',
    description: 'Columns, editorials and guest essays: informed perspectives and debate on the issues of the day.',
  },
  home: { title: 'Top Stories', description: 'The most important stories of the day, selected by the editors of Meridian News.' },
};

const published = (section?: Section) => ({ statuses: ['published'] as const, section });

/** Whether a string is a section with a listing page. */
export function isSection(value: string | undefined): value is Section {
  return sectionSchema.safeParse(value).success;
}

/** Number of listing pages of a section (at least 1: an empty section still has its page). */
export async function countSectionPages(section: Section): Promise<number> {
  const store = await useReadStore();
  return countListingPages(await store.articles.count(published(section)), SECTION_PAGE_SIZE);
}

/**
 * A section listing file (1 = /section/{section}, n >= 2 = /section/{section}/page/{n}, numbered
 * from the oldest articles so full pages never change), or undefined when it does not exist.
 */
export async function loadSectionPage(section: string, page = 1): Promise<SectionPageData | undefined> {
  return (await readSectionPage(section, page))?.data;
}

/** loadSectionPage with what it was made from: the file's records (newest first) and the section's page count. */
export async function readSectionPage(
  section: string,
  page: number,
): Promise<{ data: SectionPageData; records: ArticleRecord[]; totalPages: number } | undefined> {
  if (!isSection(section)) return undefined;
  const store = await useReadStore();
  const count = await store.articles.count(published(section));
  const slice = listingSlice(count, page, SECTION_PAGE_SIZE);
  if (!slice) return undefined;
  const totalPages = countListingPages(count, SECTION_PAGE_SIZE);
  const records = slice.limit > 0 ? await store.articles.list(published(section), slice, 'recent') : [];
  const info = SECTION_INFO[section];
  const data: SectionPageData = {
    section,
    title: info.title,
    description: info.description,
    page,
    ...(page === 1 ? { totalPages } : {}),
    newestArchive: page >= 2 && page === totalPages,
    articles: records.map(toSummary),
  };
  return { data, records, totalPages };
}

/** What /section/{section}/pages.json holds: the page count the archive pages' navigation is drawn from. */
export async function loadSectionManifest(section: string): Promise<{ pages: number } | undefined> {
  if (!isSection(section)) return undefined;
  return { pages: await countSectionPages(section) };
}

/** Every listing path: page 1 of each section and pages 2..n (the build's getStaticPaths; none without PRERENDER_DATA_PAGES). */
export async function listSectionPaths(): Promise<Array<{ section: Section; page: number }>> {
  if (!getConfig().PRERENDER_DATA_PAGES) return [];
  const paths: Array<{ section: Section; page: number }> = [];
  for (const section of SECTIONS) {
    const totalPages = await countSectionPages(section);
    for (let page = 1; page <= totalPages; page++) paths.push({ section, page });
  }
  return paths;
}

/** The path of a listing page (page 1 has no /page/ suffix). */
export function sectionPagePath(section: Section, page: number): string {
  return listingFilePath(section, page);
}

/** A published article by slug, with its counters, or undefined. */
export async function loadArticlePage(slug: string): Promise<ArticlePageData | undefined> {
  return (await readArticlePage(slug))?.data;
}

/** loadArticlePage with what it was made from: the record, its related reading and the tag rules its links follow. */
export async function readArticlePage(
  slug: string,
): Promise<{ data: ArticlePageData; record: ArticleRecord; related: ArticleRecord[]; rules: TagRules } | undefined> {
  const store = await useReadStore();
  const record: ArticleRecord | undefined = await store.articles.getBySlug(slug, { body: true });
  if (!record || record.status !== 'published') return undefined;
  const article = toArticle(record, await store.counters.get(record.id));
  const rules = await readTagRules(store);
  const related = await listRelated(store, record, rules);
  const live = await loadLiveFeed(store, record.id);
  const url = new URL(`/article/${encodeURIComponent(article.slug)}`, getConfig().SITE_URL).href;
  return {
    data: { article, url, ...linkTerms(record, rules), related: related.map(toSummary), ...(live ? { live } : {}) },
    record,
    related,
    rules,
  };
}

/** Slugs of every published article (none without PRERENDER_DATA_PAGES: the build's getStaticPaths). */
export async function listArticleSlugs(): Promise<string[]> {
  if (!getConfig().PRERENDER_DATA_PAGES) return [];
  const store = await useReadStore();
  const total = await store.articles.count(published());
  const records = await store.articles.list(published(), { offset: 0, limit: total }, 'recent');
  return records.map((r) => r.slug);
}

/** Slugs of every published article that has live coverage (issue 35): their live.json files. */
export async function listLiveSlugs(): Promise<string[]> {
  if (!getConfig().PRERENDER_DATA_PAGES) return [];
  const store = await useReadStore();
  const slugs: string[] = [];
  for (const coverage of await store.live.listCoverage()) {
    const record = await store.articles.get(coverage.articleId);
    if (record?.status === 'published') slugs.push(record.slug);
  }
  return slugs;
}
