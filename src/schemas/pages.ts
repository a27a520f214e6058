/** What each reader page is rendered from: the contract between the page-data loaders and the views. */
import type { Article, ArticleRecord, ArticleSummary, Correction } from './article.ts';
import type { Section } from './common.ts';
import type { TermKind } from './taxonomy.ts';
import type { LiveFeed } from './live.ts';

export type SectionPageData = {
  section: Section;
  title: string;
  description: string;
  /** The file number: 1 is /section/{section}, n >= 2 is /section/{section}/page/{n} (numbered from the oldest). */
  page: number;
  /** Page count, given to page 1 only: an archive file must not print it, or every publish would rewrite it. */
  totalPages?: number;
  /** Whether this archive file is the newest one (its "Previous" leads to page 1). */
  newestArchive: boolean;
  articles: ArticleSummary[];
};

/** A tag or author archive (issue 35): paged like a section, from the oldest article. */
export type TermPageData = {
  kind: TermKind;
  slug: string;
  /** The spelling shown: page 1 takes its newest article's, an archive file its own newest card's (so it never changes with a publish). */
  name: string;
  title: string;
  description: string;
  /** Published articles carrying it: on page 1 only, as the page count. */
  count?: number;
  page: number;
  totalPages?: number;
  newestArchive: boolean;
  articles: ArticleSummary[];
};

export type ArticlePageData = {
  /** Undefined when the slug matches no published article (render twins ask for any slug). */
  article?: Article | undefined;
  /** Absolute URL of the article (canonical, share links, structured data). */
  url?: string | undefined;
  /** Where each tag's link leads (by the tag's text); a tag without a page (hidden) is not linked. */
  tagLinks?: Record<string, string> | undefined;
  /** The author's page, when the name has one. */
  authorHref?: string | undefined;
  /** Related reading (issue 35), at most four. */
  related?: ArticleSummary[] | undefined;
  /** Its live coverage with every update, newest first, when it has been live (issue 35). */
  live?: LiveFeed | undefined;
};

/** A correction as /corrections lists it. */
export type CorrectionListing = Correction & { articleTitle: string; articleSlug: string; articleUrl: string };

/** The data of /corrections: every correction of a published article, newest first. */
export type CorrectionsPageData = { corrections: CorrectionListing[] };

/** What a sitemap entry shows of an article. */
export type SitemapEntry = Pick<ArticleRecord, 'slug' | 'updatedAt'>;

/** What an RSS item or a news sitemap entry shows of an article (and whether it may show it). */
export type FeedItem = Pick<ArticleRecord, 'slug' | 'title' | 'dek' | 'publishedAt' | 'authorName' | 'section' | 'status'> & {
  /** A live article's item (issue 35): the coverage's state, its number of updates and the newest one as text. */
  live?: FeedLive | undefined;
};

/** What an RSS item shows of a live article's coverage. */
export type FeedLive = { status: 'live' | 'ended'; updates: number; latestAt?: string; latestText?: string };

/** The data of a machine-readable file (feeds, sitemaps, robots.txt, a listing's pages.json), by kind. */
export type MachineFile =
  | { kind: 'robots' }
  | { kind: 'sitemap-index'; periods: Array<{ period: string; lastmod: string }> }
  | { kind: 'pages-sitemap' }
  | { kind: 'month-sitemap'; articles: SitemapEntry[] }
  | { kind: 'news-sitemap'; articles: FeedItem[]; now: number }
  | { kind: 'rss'; articles: FeedItem[]; section?: Section; term?: { kind: TermKind; slug: string; name: string } }
  | { kind: 'archives-sitemap'; paths: string[] }
  | { kind: 'pages-json'; manifest: { pages: number } }
  | { kind: 'live-json'; feed: LiveFeed };

/** Folder of the render twins: /render-twin/article/x draws what /article/x shows. */
export const TWIN_PREFIX = '/render-twin';

/**
 * A generated file handed to its render twin: a reader page's view and the data it shows, or a
 * machine file's data. The regeneration worker loads the data on the thread that holds the store and
 * the render thread draws it, so a twin never reads the store itself.
 */
export type TwinPage =
  | { route: 'article'; props: ArticlePageData }
  | { route: 'section'; props: SectionPageData }
  | { route: 'term'; props: TermPageData }
  | { route: 'corrections'; props: CorrectionsPageData }
  | { route: 'file'; props: MachineFile };
