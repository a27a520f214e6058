/** The slug rule of tags and authors (issue 35), without zod: the reader's islands link authors with it, the stores index by it. */
import { slugifyText } from './slug.ts';

/** The two kinds of archive pages besides sections: `/tag/{slug}` and `/author/{slug}`. */
export const TERM_KINDS = ['tag', 'author'] as const;
export type TermKind = (typeof TERM_KINDS)[number];

export const MAX_TERM_SLUG_LENGTH = 60;

/**
 * Slugs already made: an archive has few distinct tags and authors, and planning a rebuild slugs each
 * article's tags several times (related reading, archives); folding accents was 15% of its plan at 10,000.
 */
const slugs = new Map<string, string>();
const MAX_REMEMBERED = 50_000;

/**
 * The slug of a free-text tag or author name: accents folded, lowercase ASCII words joined by hyphens,
 * `&` read as "and". Spellings that give one slug ("Climate change", "climate-change", "Climate Change ")
 * share one page; text with no letter or digit gives '' (no page, no link).
 */
export function slugifyTerm(text: string): string {
  let slug = slugs.get(text);
  if (slug === undefined) {
    if (slugs.size >= MAX_REMEMBERED) slugs.clear();
    slug = slugifyText(text, MAX_TERM_SLUG_LENGTH);
    slugs.set(text, slug);
  }
  return slug;
}

/** The distinct non-empty slugs of an article's tags, in their order. */
export function slugifyTags(tags: readonly string[]): string[] {
  return [...new Set(tags.map(slugifyTerm).filter(Boolean))];
}

/** The public path of a term's page (file 1 of its listing). */
export function termPath(kind: TermKind, slug: string): string {
  return `/${kind}/${slug}`;
}
