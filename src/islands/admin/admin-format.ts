/** Display helpers for the back office: dates, vote adjustments, filters turned into query params. */
import type { QueryParams } from '../../lib/api-client.ts';

const dateTime = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'short' });
const longDate = new Intl.DateTimeFormat('en-US', { dateStyle: 'long' });
const longDateTime = new Intl.DateTimeFormat('en-US', { dateStyle: 'long', timeStyle: 'short' });

export function formatDateTime(iso: string | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '' : dateTime.format(date);
}

/** Dates display in long format, e.g. "October 1, 2025" (docs/product.md, Interface rules: dates). */
export function formatLongDate(iso: string | Date | undefined): string {
  if (!iso) return '';
  const date = typeof iso === 'string' ? new Date(iso) : iso;
  return Number.isNaN(date.getTime()) ? '' : longDate.format(date);
}

export function formatLongDateTime(date: Date): string {
  return longDateTime.format(date);
}

/**
 * A like/dislike adjustment typed by an editor: an integer other than zero (negatives remove),
 * else undefined and nothing is sent (docs/product.md, Interface rules: forms).
 */
export function parseVoteAdjustment(raw: string): number | undefined {
  const text = raw.trim();
  if (!/^[-+]?\d+$/.test(text)) return undefined;
  const amount = Number(text);
  if (!Number.isSafeInteger(amount) || amount === 0) return undefined;
  return amount;
}

export type ArticleFilters = {
  search: string;
  section: string;
  status: string;
  source: string;
  /** yyyy-mm-dd from a date input, in the editor's time zone. */
  dateFrom: string;
  dateTo: string;
};

export const EMPTY_ARTICLE_FILTERS: ArticleFilters = { search: '', section: '', status: '', source: '', dateFrom: '', dateTo: '' };

/** A local calendar day's start (or end) as an ISO instant, so "from the 3rd" means the editor's 3rd. */
export function localDayBoundary(day: string, end: boolean): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!match) return undefined;
  const [, y, m, d] = match;
  const date = end
    ? new Date(Number(y), Number(m) - 1, Number(d), 23, 59, 59, 999)
    : new Date(Number(y), Number(m) - 1, Number(d), 0, 0, 0, 0);
  return date.toISOString();
}

/** The query parameters of GET /api/articles and /api/articles/count for the manager's filters. */
export function articleFilterParams(filters: ArticleFilters): QueryParams {
  return {
    search: filters.search.trim(),
    section: filters.section,
    status: filters.status,
    source: filters.source.trim(),
    dateFrom: localDayBoundary(filters.dateFrom, false),
    dateTo: localDayBoundary(filters.dateTo, true),
  };
}
