/** The one slug rule of the site: article slugs and the tag and author slugs (issue 35) differ only in their length. */

/**
 * The slug of free text: accents folded, lowercase ASCII words joined by hyphens, `&` read as "and",
 * cut to `maxLength` without a trailing hyphen. Text with no letter or digit gives ''.
 */
export function slugifyText(text: string, maxLength: number): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, maxLength)
    .replace(/-+$/g, '');
}
