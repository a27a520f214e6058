/** Which public paths exist, where their files live, and which of them a set of article changes affects. */
import fs from 'node:fs';
import path from 'node:path';
import { SECTIONS, type Section } from '../../schemas/common.ts';
import type { ArticleRecord } from '../../schemas/article.ts';
import type { Store } from '../../store/types.ts';
import type { ArticleChange } from '../runtime.ts';
import { toSummary } from '../articles.ts';
import { SECTION_PAGE_SIZE, sectionPagePath } from '../page-data.ts';
import {
  NEWS_SITEMAP_PATH,
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
} from './feeds.ts';

/** The list of every correction (issue 14), regenerated when a correction is added or its article changes. */
export const CORRECTIONS_PATH = '/corrections';

const SLUG = '[A-Za-z0-9_~-][A-Za-z0-9._~-]*';
const SECTION = `(?:${SECTIONS.join('|')})`;
/** Every path the pipeline may write or delete; anything else is refused before it reaches the disk. */
const PUBLIC_PATH = new RegExp(
  `^(?:/article/${SLUG}|/section/${SECTION}(?:/page/[1-9][0-9]{0,6})?|/section/${SECTION}/rss\\.xml|/rss\\.xml|/sitemap\\.xml|/news-sitemap\\.xml|/robots\\.txt|${CORRECTIONS_PATH})$`,
);

export function isRegenerablePath(publicPath: string): boolean {
  return PUBLIC_PATH.test(publicPath);
}

export function articlePath(slug: string): string {
  return `/article/${slug}`;
}

/** Whether the path is an HTML page (search indexes it) rather than a feed or text file. */
export function isHtmlPath(publicPath: string): boolean {
  return !/\.(xml|txt)$/.test(publicPath);
}

/** The file that serves a public path under the client folder (build.format 'directory'). */
export function fileForPath(clientDir: string, publicPath: string): string {
  if (!isRegenerablePath(publicPath)) throw new Error(`Not a regenerable path: ${publicPath}`);
  const relative = isHtmlPath(publicPath) ? `${publicPath}/index.html` : publicPath;
  return path.join(path.resolve(clientDir), ...relative.split('/').filter(Boolean));
}

/** The machine-readable paths every change of the published set may touch. */
export function machinePaths(): string[] {
  return [RSS_PATH, ...SECTIONS.map(sectionFeedPath), SITEMAP_PATH, NEWS_SITEMAP_PATH, ROBOTS_PATH];
}

/** Every public path the current data has: listings first, then feeds, then articles. */
export async function listPublicPaths(store: Store): Promise<string[]> {
  const listings: string[] = [];
  for (const section of SECTIONS) {
    const count = await store.articles.count({ statuses: ['published'], section });
    const pages = Math.max(1, Math.ceil(count / SECTION_PAGE_SIZE));
    for (let page = 1; page <= pages; page++) listings.push(sectionPagePath(section, page));
  }
  const articles = (await listPublished(store)).map((a) => articlePath(a.slug));
  return [...listings, CORRECTIONS_PATH, ...machinePaths(), ...articles];
}

/** Public paths that have a file in the client folder now (pages the data may no longer have). */
export function listRenderedPaths(clientDir: string): string[] {
  const found: string[] = [];
  const dirs = (dir: string) => {
    try {
      return fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    } catch {
      return [];
    }
  };
  const has = (file: string) => fs.existsSync(file);
  if (has(path.join(clientDir, 'corrections', 'index.html'))) found.push(CORRECTIONS_PATH);
  for (const slug of dirs(path.join(clientDir, 'article'))) {
    if (has(path.join(clientDir, 'article', slug, 'index.html'))) found.push(articlePath(slug));
  }
  for (const section of dirs(path.join(clientDir, 'section'))) {
    const base = path.join(clientDir, 'section', section);
    if (has(path.join(base, 'index.html'))) found.push(`/section/${section}`);
    if (has(path.join(base, 'rss.xml'))) found.push(`/section/${section}/rss.xml`);
    for (const page of dirs(path.join(base, 'page'))) {
      if (has(path.join(base, 'page', page, 'index.html'))) found.push(`/section/${section}/page/${page}`);
    }
  }
  return found.filter(isRegenerablePath);
}

const isPublic = (article: ArticleRecord | undefined): article is ArticleRecord => article?.status === 'published';

/** Newest first, as the store's 'recent' order: published date (else last update), then id. */
function byRecent(a: ArticleRecord, b: ArticleRecord): number {
  const da = a.publishedAt ?? a.updatedAt;
  const db = b.publishedAt ?? b.updatedAt;
  return da < db ? 1 : da > db ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** The list as it was before the changes, rebuilt from the list after them. */
function listBefore(after: readonly ArticleRecord[], changes: readonly ArticleChange[], inScope: (a: ArticleRecord) => boolean): ArticleRecord[] {
  const changed = new Set(changes.map((c) => (c.after ?? c.before)!.id));
  const list = after.filter((a) => !changed.has(a.id));
  for (const { before } of changes) if (isPublic(before) && inScope(before)) list.push(before);
  return list.sort(byRecent);
}

/** Pages (1-based) of a paginated list whose content differs; every page when the page count moved. */
function changedPages(before: readonly ArticleRecord[], after: readonly ArticleRecord[], pageSize: number, fingerprint: (a: ArticleRecord) => string): number[] {
  const pagesBefore = Math.max(1, Math.ceil(before.length / pageSize));
  const pagesAfter = Math.max(1, Math.ceil(after.length / pageSize));
  const all = Math.max(pagesBefore, pagesAfter);
  // The pagination shows the page count, so every page changes with it (and the last one may go).
  if (pagesBefore !== pagesAfter) return Array.from({ length: all }, (_, i) => i + 1);
  const pages: number[] = [];
  for (let page = 1; page <= all; page++) {
    const slice = (list: readonly ArticleRecord[]) => list.slice((page - 1) * pageSize, page * pageSize).map(fingerprint).join('\n');
    if (slice(before) !== slice(after)) pages.push(page);
  }
  return pages;
}

/** What a listing card shows: the loader hands the view exactly the summary. */
const cardFingerprint = (article: ArticleRecord) => JSON.stringify(toSummary(article));

/** What the article page shows: the loader hands the view the whole record (without its origin). */
function pageFingerprint(article: ArticleRecord): string {
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
  }

  const sections = new Set<Section>();
  for (const { before, after } of visible) {
    if (isPublic(before)) sections.add(before.section);
    if (isPublic(after)) sections.add(after.section);
  }
  for (const section of SECTIONS) {
    if (!sections.has(section)) continue;
    const after = await listPublished(store, section);
    const before = listBefore(after, visible, (a) => a.section === section);
    for (const page of changedPages(before, after, SECTION_PAGE_SIZE, cardFingerprint)) listings.push(sectionPagePath(section, page));
    const feedBefore = before.slice(0, FEED_SIZE).map(feedFingerprint).join('\n');
    const feedAfter = after.slice(0, FEED_SIZE).map(feedFingerprint).join('\n');
    if (feedBefore !== feedAfter) machine.push(sectionFeedPath(section));
  }

  const allAfter = await listPublished(store, undefined, FEED_SIZE + visible.length);
  const allBefore = listBefore(allAfter, visible, () => true);
  const topAfter = allAfter.slice(0, FEED_SIZE).map(feedFingerprint).join('\n');
  const topBefore = allBefore.slice(0, FEED_SIZE).map(feedFingerprint).join('\n');
  if (topAfter !== topBefore) machine.push(RSS_PATH);

  const entry = (article: ArticleRecord | undefined, fingerprint: (a: ArticleRecord) => string) => (isPublic(article) ? fingerprint(article) : '');
  if (visible.some((c) => entry(c.before, sitemapFingerprint) !== entry(c.after, sitemapFingerprint))) machine.push(SITEMAP_PATH);
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
