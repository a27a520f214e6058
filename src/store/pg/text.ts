/** Text helpers of the PostgreSQL store: the same word folding as the lowdb index, so both stores find the same articles. */

const WORD = /[\p{L}\p{N}]+/gu;

/** Lowercases and strips diacritics (the lowdb index folds the same way; PostgreSQL's `simple` configuration only lowercases). */
export function fold(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
}

/** Word tokens of a search query, folded. */
export function queryTerms(text: string): string[] {
  return fold(text).match(WORD) ?? [];
}

/**
 * A to_tsquery expression for the terms: every term must match, the last one also as a prefix
 * (search-as-you-type), as in the lowdb index. Terms are letters and digits only, so nothing in
 * them is tsquery syntax; the expression still travels as a bound parameter.
 */
export function tsQuery(terms: readonly string[]): string {
  return terms.map((term, i) => (i === terms.length - 1 && term.length >= 2 ? `${term}:*` : term)).join(' & ');
}

export function stripTags(html: string): string {
  return html.replace(/<[^>]*>/g, ' ').replace(/&[a-z#0-9]+;/gi, ' ');
}

/** An ISO string for a date, or null when the text is not a date (a filter then never matches it). */
export function isoOrNull(value: string | undefined): string | null {
  if (!value) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}
