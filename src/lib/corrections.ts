/** Pure helpers for corrections shared by the server and the views (issue 14). */
import type { ArticleRecord } from '../schemas/article.ts';

/** The dateModified of an article: its last save or its last correction, whichever is later. */
export function lastModifiedOf(article: Pick<ArticleRecord, 'updatedAt' | 'corrections'>): string {
  const last = article.corrections?.at(-1)?.at;
  return last && last > article.updatedAt ? last : article.updatedAt;
}
