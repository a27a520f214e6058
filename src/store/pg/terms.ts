/** The tag and author columns of an article row (issue 35), computed in the application with the one slug rule. */
import { slugifyTerm } from '../../schemas/taxonomy.ts';

/** Each distinct tag slug with the first spelling that gives it, and the author's slug (null without a name that has one). */
export function articleTermColumns(
  tags: readonly string[],
  authorName: string,
): { slugs: string[]; names: string[]; author: string | null } {
  const slugs: string[] = [];
  const names: string[] = [];
  for (const tag of tags) {
    const slug = slugifyTerm(tag);
    if (!slug || slugs.includes(slug)) continue;
    slugs.push(slug);
    names.push(tag);
  }
  return { slugs, names, author: slugifyTerm(authorName) || null };
}
