/** The slug rule of tags and authors (issue 35), without zod: the reader's islands link authors with it, the stores index by it. */
import { slugifyText } from './slug.ts';

/** The two kinds of archive pages besides sections: `/tag/{slug}` and `/author/{slug}`. */
export const TERM_KINDS = ['tag', 'author'] as const;
export type TermKind = (typeof TERM_KINDS)[number];

export const MAX_TERM_SLUG_LENGTH = 60;

/**
 * The slug of a free-text tag or author name: accents folded, lowercase ASCII words joined by hyphens,
 * `&` read as "and". Spellings that give one slug ("Climate change", "climate-change", "Climate Change ")
 * share one page; text with no letter or digit gives '' (no page, no link).
 */
export function slugifyTerm(text: string): string {
  return slugifyText(text, MAX_TERM_SLUG_LENGTH);
}

/** The distinct non-empty slugs of an article's tags, in their order. */
export function slugifyTags(tags: readonly string[]): string[] {
  return [...new Set(tags.map(slugifyTerm).filter(Boolean))];
}

/** The public path of a term's page (file 1 of its listing). */
export function termPath(kind: TermKind, slug: string): string {
  return `/${kind}/${slug}`;
}
