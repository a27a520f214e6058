/** Which public paths exist, where their files live, and which of them the data has or the client folder holds. */
import fs from 'node:fs';
import path from 'node:path';
import { SECTIONS, type Section } from '../../schemas/common.ts';
import type { ArticleRecord } from '../../schemas/article.ts';
import type { Store } from '../../store/types.ts';
import { SECTION_PAGE_SIZE, sectionPagePath } from '../page-data.ts';
import { countListingPages, listingManifestPath, listingSlice } from '../../lib/pagination.ts';
import {
  ARCHIVES_SITEMAP_PATH,
  NEWS_SITEMAP_PATH,
  PAGES_SITEMAP_PATH,
  listPeriods,
  periodSitemapPath,
  ROBOTS_PATH,
  RSS_PATH,
  SITEMAP_PATH,
  listPublished,
  sectionFeedPath,
} from './feeds.ts';
import { listTermsWithPages, TERM_PAGE_SIZE, termPagePaths } from '../archive-pages.ts';
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
