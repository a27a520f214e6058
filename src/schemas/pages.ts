/** What each reader page is rendered from: the contract between the page-data loaders and the views. */
import type { Article, ArticleSummary } from './article.ts';
import type { Section } from './common.ts';

export type SectionPageData = {
  section: Section;
  title: string;
  description: string;
  page: number;
  totalPages: number;
  articles: ArticleSummary[];
};

export type ArticlePageData = {
  /** Undefined when the slug matches no published article (render twins ask for any slug). */
  article?: Article | undefined;
  /** Absolute URL of the article (canonical, share links, structured data). */
  url?: string | undefined;
};
