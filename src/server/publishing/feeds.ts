/** The machine-readable files of the site (sitemaps, RSS feeds, robots.txt), built from the store for the build and for regeneration. */
import { SECTIONS, type Section } from '../../schemas/common.ts';
import { articlePeriod, periodRange, type ArticleRecord } from '../../schemas/article.ts';
import type { Store } from '../../store/types.ts';
import type { FeedItem, FeedLive, MachineFile, SitemapEntry } from '../../schemas/pages.ts';
import { LIVE_FEED_SIZE } from '../../schemas/live.ts';
import { getConfig, type Config } from '../../config.ts';
import { SECTION_INFO, loadSectionManifest } from '../page-data.ts';
import { useReadStore } from '../runtime.ts';
import { timeSlicer } from '../time-slice.ts';
import { listTermsWithPages, loadTermManifest, readTermPage, termFilter, termNameOn } from '../archive-pages.ts';
import { termPath, TERM_KINDS, type TermKind } from '../../schemas/taxonomy.ts';
import { loadLiveFeed } from '../live-feed.ts';

/** Items in each RSS feed (site-wide and per section). */
export const FEED_SIZE = 50;
/** Google News only wants articles of the last two days, at most 1,000 of them. */
export const NEWS_WINDOW_MS = 2 * 24 * 60 * 60 * 1000;
export const NEWS_MAX_URLS = 1000;

/** Paths of the site-wide machine-readable files. */
export const SITEMAP_PATH = '/sitemap.xml';
export const NEWS_SITEMAP_PATH = '/news-sitemap.xml';
export const RSS_PATH = '/rss.xml';
export const ROBOTS_PATH = '/robots.txt';

/** The sitemap of the static pages and section listings, and one sitemap per month of articles. */
export const PAGES_SITEMAP_PATH = '/sitemaps/pages.xml';
/** The sitemap of the tag and author archives (issue 35): page 1 of each one that has a page. */
export const ARCHIVES_SITEMAP_PATH = '/sitemaps/archives.xml';

/** The month (YYYY-MM, UTC) an article belongs to, for its sitemap and its search bundle. */
export const periodOf = articlePeriod;

export function periodSitemapPath(period: string): string {
  return `/sitemaps/${period}.xml`;
}

/** The store filter for the published articles of one month (UTC). */
function periodFilter(period: string) {
  return { statuses: ['published'] as const, ...periodRange(period) };
}

/** Articles a month's sitemap lists and writes per turn of the event loop. */
const SITEMAP_BATCH = 500;

/**
 * Each month that has published articles, newest first, with the newest change of its articles: the
 * store keeps these as articles change. Reading the whole archive for them instead held the event loop
 * on every publish, longer as the archive grew (every publish re-renders the sitemap index; docs/performance.md, 2026-11-25).
 */
export async function listPeriods(store: Store): Promise<Array<{ period: string; lastmod: string }>> {
  return (await store.articles.periods()).map(({ period, lastmod }) => ({ period, lastmod }));
}

export function sectionFeedPath(section: Section): string {
  return `/section/${section}/rss.xml`;
}

/** The RSS feed of a tag or author archive. */
export function termFeedPath(kind: TermKind, slug: string): string {
  return `${termPath(kind, slug)}/rss.xml`;
}

/** A tag's or author's feed, page or pages.json path, parsed: kind, slug and which file. */
export function parseTermPath(pathname: string): { kind: TermKind; slug: string; file: 'rss' | 'pages-json' | number } | undefined {
  const match = /^\/(tag|author)\/([a-z0-9-]+)(?:\/(rss\.xml|pages\.json|page\/([1-9][0-9]{0,6})))?$/.exec(pathname);
  if (!match) return undefined;
  const kind = TERM_KINDS.find((k) => k === match[1])!;
  const file = match[3] === 'rss.xml' ? 'rss' : match[3] === 'pages.json' ? 'pages-json' : match[4] ? Number(match[4]) : 1;
  return { kind, slug: match[2]!, file };
}

function escapeXml(value: string): string {
  return value.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);
}

function absolute(config: Config, pathname: string): string {
  return new URL(pathname, config.SITE_URL).href;
}

function articleUrl(config: Config, slug: string): string {
  return absolute(config, `/article/${encodeURIComponent(slug)}`);
}

/**
 * articleUrl for many articles: the prefix is resolved once, and an encoded slug needs no more
 * resolving unless it is a dot segment (`new URL` per article was half of a month sitemap's time).
 */
function articleUrls(config: Config): (slug: string) => string {
  const prefix = absolute(config, '/article/');
  return (slug) => (slug === '.' || slug === '..' ? articleUrl(config, slug) : prefix + encodeURIComponent(slug));
}

/** Published articles, newest first (all of them, or one section's), optionally only the first `limit`. */
export async function listPublished(store: Store, section?: Section, limit?: number): Promise<ArticleRecord[]> {
  const filter = { statuses: ['published'] as const, section };
  const total = limit ?? (await store.articles.count(filter));
  return store.articles.list(filter, { offset: 0, limit: total }, 'recent');
}

/**
 * The articles the news sitemap lists at `now`, newest first: read by date range (the last two days),
 * not by listing the whole archive and filtering it, which cost seconds per render on PostgreSQL (docs/performance.md,
 * 2026-11-25) and ran at every start (the scheduler's first tick queues the news sitemap).
 */
export async function listNewsworthy(store: Store, now: number): Promise<ArticleRecord[]> {
  const filter = {
    statuses: ['published'] as const,
    dateFrom: new Date(now - NEWS_WINDOW_MS).toISOString(),
    dateTo: new Date(now + 60_000).toISOString(),
  };
  const articles = await store.articles.list(filter, { offset: 0, limit: NEWS_MAX_URLS }, 'recent');
  return articles.filter((article) => isNewsworthy(article, now));
}

/**
 * What an RSS item shows of an article: regeneration compares these to decide whether a feed changed,
 * so anything added to the feed must be added here too.
 */
export function feedFingerprint(article: Omit<FeedItem, 'status'>): string {
  return JSON.stringify([article.slug, article.title, article.dek ?? '', article.publishedAt ?? '', article.authorName, article.section]);
}

/** What a sitemap entry shows of an article. */
export function sitemapFingerprint(article: SitemapEntry): string {
  return JSON.stringify([article.slug, article.updatedAt]);
}

/** What a news sitemap entry shows of an article. */
export function newsFingerprint(article: ArticleRecord): string {
  return JSON.stringify([article.slug, article.title, article.publishedAt ?? '']);
}

/** Whether an article belongs in the news sitemap at `now` (published within the window). */
export function isNewsworthy(article: Pick<ArticleRecord, 'status' | 'publishedAt'>, now: number): boolean {
  if (article.status !== 'published' || !article.publishedAt) return false;
  const published = Date.parse(article.publishedAt);
  return published >= now - NEWS_WINDOW_MS && published <= now + 60_000;
}

/** RSS 2.0 feed of the newest articles, site-wide, of one section, or of one tag or author. */
export function buildRss(
  config: Config,
  articles: readonly FeedItem[],
  section?: Section,
  term?: { kind: TermKind; slug: string; name: string },
): string {
  const info = section ? SECTION_INFO[section] : undefined;
  const termTitle = term && (term.kind === 'tag' ? `Tagged ${term.name}` : `By ${term.name}`);
  const title = termTitle ? `${termTitle} | ${config.SITE_NAME}` : info ? `${info.title} | ${config.SITE_NAME}` : config.SITE_NAME;
  const link = absolute(config, term ? termPath(term.kind, term.slug) : section ? `/section/${section}` : '/');
  const self = absolute(config, term ? termFeedPath(term.kind, term.slug) : section ? sectionFeedPath(section) : RSS_PATH);
  const description = term
    ? `The latest stories ${term.kind === 'tag' ? `tagged ${term.name}` : `by ${term.name}`} from ${config.SITE_NAME}.`
    : (info?.description ?? `The latest stories from ${config.SITE_NAME}.`);
  // Derived from the items (not the clock) so a regenerated feed is byte-identical to the built one.
  const newest = articles[0]?.publishedAt;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom" xmlns:dc="http://purl.org/dc/elements/1.1/">',
    '<channel>',
    `<title>${escapeXml(title)}</title>`,
    `<link>${escapeXml(link)}</link>`,
    `<description>${escapeXml(description)}</description>`,
    '<language>en</language>',
    `<atom:link href="${escapeXml(self)}" rel="self" type="application/rss+xml"/>`,
  ];
  if (newest) lines.push(`<lastBuildDate>${new Date(newest).toUTCString()}</lastBuildDate>`);
  for (const article of articles) {
    const url = articleUrl(config, article.slug);
    lines.push(
      '<item>',
      `<title>${escapeXml(article.title)}</title>`,
      `<link>${escapeXml(url)}</link>`,
      `<guid isPermaLink="true">${escapeXml(url)}</guid>`,
    );
    if (article.publishedAt) lines.push(`<pubDate>${new Date(article.publishedAt).toUTCString()}</pubDate>`);
    const description = [article.live ? describeLive(article.live) : '', article.dek ?? ''].filter(Boolean).join(' ');
    if (description) lines.push(`<description>${escapeXml(description)}</description>`);
    if (article.authorName) lines.push(`<dc:creator>${escapeXml(article.authorName)}</dc:creator>`);
    lines.push(`<category>${escapeXml(article.section)}</category>`, '</item>');
  }
  lines.push('</channel>', '</rss>', '');
  return lines.join('\n');
}

/** Words of an update an RSS item quotes. */
const FEED_LATEST_CHARS = 280;

/**
 * What a live article's RSS item says before its dek (issue 35): the article stays one item (one
 * guid, so a reader's app does not get an item per update), and its description names the newest update.
 */
function describeLive(live: FeedLive): string {
  if (live.status === 'ended') return `Live coverage ended (${live.updates} ${live.updates === 1 ? 'update' : 'updates'}).`;
  if (!live.latestAt || !live.latestText) return 'Live coverage.';
  const time = new Date(live.latestAt).toISOString().slice(11, 16);
  return `Live: latest update at ${time} UTC: ${live.latestText}`;
}

/**
 * sitemap.xml as a sitemap index: the pages sitemap and one child per month of articles, so a
 * publish rewrites its month's child (and this short index), never a list of every article.
 */
export function buildSitemapIndex(config: Config, periods: ReadonlyArray<{ period: string; lastmod: string }>): string {
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'];
  lines.push(`<sitemap><loc>${escapeXml(absolute(config, PAGES_SITEMAP_PATH))}</loc></sitemap>`);
  lines.push(`<sitemap><loc>${escapeXml(absolute(config, ARCHIVES_SITEMAP_PATH))}</loc></sitemap>`);
  for (const { period, lastmod } of periods) {
    lines.push(
      `<sitemap><loc>${escapeXml(absolute(config, periodSitemapPath(period)))}</loc><lastmod>${escapeXml(new Date(lastmod).toISOString())}</lastmod></sitemap>`,
    );
  }
  lines.push('</sitemapindex>', '');
  return lines.join('\n');
}

const URLSET_OPEN = ['<?xml version="1.0" encoding="UTF-8"?>', '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'];
const URLSET_CLOSE = ['</urlset>', ''];

function sitemapArticleLine(url: (slug: string) => string, article: SitemapEntry): string {
  return `<url><loc>${escapeXml(url(article.slug))}</loc><lastmod>${escapeXml(new Date(article.updatedAt).toISOString())}</lastmod></url>`;
}

/**
 * A sitemap (urlset): the static pages and section listings when given, and the given articles with
 * their last change; `sections: false` lists the given pages alone (the archives sitemap).
 */
export function buildSitemap(
  config: Config,
  articles: readonly SitemapEntry[],
  staticPages: readonly string[] = [],
  sections = true,
): string {
  const lines = [...URLSET_OPEN];
  for (const page of staticPages) lines.push(`<url><loc>${escapeXml(absolute(config, page))}</loc></url>`);
  if (staticPages.length && sections)
    for (const section of SECTIONS) lines.push(`<url><loc>${escapeXml(absolute(config, `/section/${section}`))}</loc></url>`);
  const url = articleUrls(config);
  for (const article of articles) lines.push(sitemapArticleLine(url, article));
  lines.push(...URLSET_CLOSE);
  return lines.join('\n');
}

/**
 * The entries of one month's sitemap, or undefined for a month without published articles. A month
 * grows with the archive (6,700 articles at 100,000), and listing it at once held the event loop on
 * every publish of that month (docs/performance.md, 2026-11-25): it is read from the store a batch at
 * a time, with a turn of the event loop whenever a slice is used up. An article published meanwhile
 * queues this file again, so a batch boundary shifted by it is rewritten at once.
 */
export async function listPeriodSitemap(store: Store, period: string): Promise<SitemapEntry[] | undefined> {
  const filter = periodFilter(period);
  const total = await store.articles.count(filter);
  if (total === 0) return undefined;
  const slice = timeSlicer();
  const entries: SitemapEntry[] = [];
  for (let offset = 0; offset < total; offset += SITEMAP_BATCH) {
    const batch = await store.articles.list(filter, { offset, limit: Math.min(SITEMAP_BATCH, total - offset) }, 'recent');
    for (const { slug, updatedAt } of batch) entries.push({ slug, updatedAt });
    await slice();
  }
  return entries;
}

/** One month's sitemap (the lines buildSitemap writes for the month's articles), or undefined for a month without published articles. */
export async function buildPeriodSitemap(config: Config, store: Store, period: string): Promise<string | undefined> {
  const entries = await listPeriodSitemap(store, period);
  return entries && buildSitemap(config, entries);
}

/** news-sitemap.xml (Google News): articles published in the last two days. */
export function buildNewsSitemap(config: Config, articles: readonly FeedItem[], now: number): string {
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">',
  ];
  const recent = articles.filter((a) => isNewsworthy(a, now)).slice(0, NEWS_MAX_URLS);
  for (const article of recent) {
    lines.push(
      '<url>',
      `<loc>${escapeXml(articleUrl(config, article.slug))}</loc>`,
      '<news:news>',
      `<news:publication><news:name>${escapeXml(config.SITE_NAME)}</news:name><news:language>en</news:language></news:publication>`,
      `<news:publication_date>${escapeXml(new Date(article.publishedAt!).toISOString())}</news:publication_date>`,
      `<news:title>${escapeXml(article.title)}</news:title>`,
      '</news:news>',
      '</url>',
    );
  }
  lines.push('</urlset>', '');
  return lines.join('\n');
}

/** robots.txt: everything public may be crawled; the back office, the API and render twins may not. */
export function buildRobots(config: Config): string {
  return [
    'User-agent: *',
    'Disallow: /admin',
    'Disallow: /editor',
    'Disallow: /login',
    'Disallow: /api/',
    'Disallow: /render-twin/',
    '',
    `Sitemap: ${absolute(config, SITEMAP_PATH)}`,
    `Sitemap: ${absolute(config, NEWS_SITEMAP_PATH)}`,
    '',
  ].join('\n');
}

const XML = 'application/xml; charset=utf-8';
const RSS = 'application/rss+xml; charset=utf-8';

/** A machine file's data, a file this data has none of (a month without articles), or a path that is no machine file. */
export type MachineFileLoad = { kind: 'file'; file: MachineFile } | { kind: 'missing' } | { kind: 'unknown' };

/** Page 1 of every tag and author archive that has a page, tags first, each sorted by slug. */
export async function listArchivePaths(store: Store): Promise<string[]> {
  return (await listTermsWithPages(store)).map((term) => termPath(term.kind, term.slug));
}

/** Only what an RSS item or news entry shows: the data crosses to the render thread, bodies need not. */
function feedItemOf({ slug, title, dek, publishedAt, authorName, section, status }: ArticleRecord): FeedItem {
  return {
    slug,
    title,
    authorName,
    section,
    status,
    ...(dek === undefined ? {} : { dek }),
    ...(publishedAt === undefined ? {} : { publishedAt }),
  };
}

/** Feed items of articles, with their live coverage (issue 35): one read of the (few) coverages, and one per live item. */
async function feedItemsOf(store: Store, articles: readonly ArticleRecord[]): Promise<FeedItem[]> {
  const live = new Set((await store.live.listCoverage()).map((c) => c.articleId));
  return Promise.all(
    articles.map(async (article) => {
      const item = feedItemOf(article);
      const feed = live.has(article.id) ? await loadLiveFeed(store, article.id, 1) : undefined;
      if (!feed) return item;
      const latest = feed.updates[0];
      const text = latest?.text ?? '';
      const quoted = text.length > FEED_LATEST_CHARS ? `${text.slice(0, FEED_LATEST_CHARS - 1)}…` : text;
      return {
        ...item,
        live: { status: feed.status, updates: feed.total, ...(latest ? { latestAt: latest.at, latestText: quoted } : {}) },
      };
    }),
  );
}

/**
 * The data of one machine-readable path, read from the store of this process (the build's snapshot
 * or the server's live store); drawMachineFile turns it into the file.
 */
export async function loadMachineFile(pathname: string, now: number = Date.now()): Promise<MachineFileLoad> {
  const found = (file: MachineFile): MachineFileLoad => ({ kind: 'file', file });
  const liveSlug = /^\/article\/([^/]+)\/live\.json$/.exec(pathname)?.[1];
  if (liveSlug !== undefined) {
    const store = await useReadStore();
    const article = await store.articles.getBySlug(decodeURIComponent(liveSlug));
    const feed = article?.status === 'published' ? await loadLiveFeed(store, article.id, LIVE_FEED_SIZE) : undefined;
    return feed ? found({ kind: 'live-json', feed }) : { kind: 'missing' };
  }
  if (pathname === ROBOTS_PATH) return found({ kind: 'robots' });
  if (pathname === PAGES_SITEMAP_PATH) return found({ kind: 'pages-sitemap' });
  if (pathname === ARCHIVES_SITEMAP_PATH) return found({ kind: 'archives-sitemap', paths: await listArchivePaths(await useReadStore()) });
  const term = parseTermPath(pathname);
  if (term?.file === 'pages-json') {
    const manifest = await loadTermManifest(term.kind, term.slug);
    return manifest ? found({ kind: 'pages-json', manifest }) : { kind: 'missing' };
  }
  if (term?.file === 'rss') {
    // The feed exists while the archive's page 1 does.
    if (!(await readTermPage(term.kind, term.slug, 1))) return { kind: 'missing' };
    const store = await useReadStore();
    const records = await store.articles.list(termFilter(term.kind, term.slug), { offset: 0, limit: FEED_SIZE }, 'recent');
    const name = termNameOn(term.kind, term.slug, records[0]);
    return found({ kind: 'rss', articles: records.map(feedItemOf), term: { kind: term.kind, slug: term.slug, name } });
  }
  const month = /^\/sitemaps\/(\d{4}-\d{2})\.xml$/.exec(pathname)?.[1];
  const listing = /^\/section\/([a-z]+)\/pages\.json$/.exec(pathname)?.[1];
  const section = SECTIONS.find((s) => s === /^\/section\/([a-z]+)\/rss\.xml$/.exec(pathname)?.[1]);
  const known = pathname === SITEMAP_PATH || pathname === NEWS_SITEMAP_PATH || pathname === RSS_PATH;
  if (!known && !month && !listing && !section) return { kind: 'unknown' };
  const store = await useReadStore();
  if (pathname === SITEMAP_PATH) return found({ kind: 'sitemap-index', periods: await listPeriods(store) });
  if (month) {
    const articles = await listPeriodSitemap(store, month);
    return articles ? found({ kind: 'month-sitemap', articles }) : { kind: 'missing' };
  }
  if (listing) {
    const manifest = await loadSectionManifest(listing);
    return manifest ? found({ kind: 'pages-json', manifest }) : { kind: 'missing' };
  }
  if (pathname === NEWS_SITEMAP_PATH)
    return found({ kind: 'news-sitemap', articles: (await listNewsworthy(store, now)).map(feedItemOf), now });
  const articles = await feedItemsOf(store, await listPublished(store, section, FEED_SIZE));
  return found(section ? { kind: 'rss', articles, section } : { kind: 'rss', articles });
}

/** A machine file's bytes and type, drawn from its data; `staticPages` are the top-level pages the pages sitemap lists. */
export function drawMachineFile(file: MachineFile, staticPages: readonly string[]): { body: string; contentType: string } {
  const config = getConfig();
  switch (file.kind) {
    case 'robots':
      return { body: buildRobots(config), contentType: 'text/plain; charset=utf-8' };
    case 'sitemap-index':
      return { body: buildSitemapIndex(config, file.periods), contentType: XML };
    case 'pages-sitemap':
      return { body: buildSitemap(config, [], staticPages), contentType: XML };
    case 'month-sitemap':
      return { body: buildSitemap(config, file.articles), contentType: XML };
    case 'news-sitemap':
      return { body: buildNewsSitemap(config, file.articles, file.now), contentType: XML };
    case 'rss':
      return { body: buildRss(config, file.articles, file.section, file.term), contentType: RSS };
    case 'archives-sitemap':
      return { body: buildSitemap(config, [], file.paths, false), contentType: XML };
    case 'pages-json':
      return { body: JSON.stringify(file.manifest) + '\n', contentType: 'application/json; charset=utf-8' };
    case 'live-json':
      return { body: JSON.stringify(file.feed) + '\n', contentType: 'application/json; charset=utf-8' };
  }
}
