/** How articles are ordered by date and matched against a listing filter: shared by the in-memory indexes and the search. */
import type { ArticleFilter, ArticleRecord } from '../../schemas/article.ts';
import { slugifyTerm } from '../../schemas/taxonomy.ts';

/** The date an article is listed by: published date, else last update. */
export function sortDate(article: ArticleRecord): string {
  return article.publishedAt ?? article.updatedAt;
}

/** Newest first, ties by id (descending): a total order, so a record's position is found by binary search. */
export function byRecent(a: ArticleRecord, b: ArticleRecord): number {
  const da = sortDate(a);
  const db = sortDate(b);
  return da < db ? 1 : da > db ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** Normalises an ISO date or date-time bound to a comparable ISO string. */
export function bound(value: string | undefined, end: boolean): string | undefined {
  if (!value) return undefined;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return `${value}T${end ? '23:59:59.999' : '00:00:00.000'}Z`;
  return new Date(value).toISOString();
}

/** A stored date as it was written by toISOString(): compared as a string without parsing it. */
export const CANONICAL_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * The filter as a test of one article, with its bounds and needles worked out once: a month's
 * sitemap lists thousands of articles through it, and parsing the bounds and each article's date
 * every time made that a long event-loop turn at a large archive (docs/performance.md, 2026-11-25).
 */
export function articleMatcher(filter: ArticleFilter): (article: ArticleRecord) => boolean {
  const from = bound(filter.dateFrom, false);
  const to = bound(filter.dateTo, true);
  const source = filter.source?.toLowerCase();
  const search = filter.search?.toLowerCase();
  return (article) => {
    if (filter.section && article.section !== filter.section) return false;
    if (filter.statuses && !filter.statuses.includes(article.status)) return false;
    if (filter.createdBy !== undefined && article.createdBy !== filter.createdBy) return false;
    if (filter.tag !== undefined && !article.tags.some((tag) => slugifyTerm(tag) === filter.tag)) return false;
    if (filter.author !== undefined && slugifyTerm(article.authorName) !== filter.author) return false;
    if (filter.isBreaking !== undefined && article.isBreaking !== filter.isBreaking) return false;
    if (filter.isEditorsPick !== undefined && article.isEditorsPick !== filter.isEditorsPick) return false;
    if (source && !(article.sourceLabel ?? '').toLowerCase().includes(source)) return false;
    if (from || to) {
      const stored = sortDate(article);
      const date = CANONICAL_DATE.test(stored) ? stored : new Date(stored).toISOString();
      if (from && date < from) return false;
      if (to && date > to) return false;
    }
    if (search) {
      const haystack = [article.title, article.dek ?? '', article.authorName, article.sourceLabel ?? '', ...article.tags]
        .join('\n')
        .toLowerCase();
      if (!haystack.includes(search)) return false;
    }
    return true;
  };
}
