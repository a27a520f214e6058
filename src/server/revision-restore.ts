/** Restoring a revision (issue 14): its content saved again as a new version, through the one article save. */
import type { Article, ArticleRecord } from '../schemas/article.ts';
import type { Runtime } from './runtime.ts';
import { commitArticle, toArticle, type Actor } from './articles.ts';
import { recordAudit } from './audit.ts';
import { getRevision } from './revisions.ts';

/** Content a restore brings back; status and schedule stay as they are now (restoring text never publishes or unpublishes). */
export const RESTORED_FIELDS = [
  'title',
  'dek',
  'bodyHtml',
  'heroImage',
  'section',
  'tags',
  'authorName',
  'sourceLabel',
  'sourceUrl',
  'readingTime',
  'isBreaking',
  'isEditorsPick',
] as const;

/**
 * Restores a revision's content as a new save (a new version and revision, `restoredFrom` set).
 * With `expectedVersion` a stale editor gets the same 409 as a stale PUT.
 */
export async function restoreRevision(
  runtime: Runtime,
  articleId: string,
  rev: number,
  options: { actor?: Actor | undefined; expectedVersion?: number | undefined } = {},
): Promise<Article> {
  const revision = await getRevision(runtime, articleId, rev);
  const saved = await commitArticle(
    runtime,
    articleId,
    (before, now) => {
      const next: ArticleRecord = { ...before, updatedAt: now };
      for (const key of RESTORED_FIELDS) {
        const value = revision.article[key];
        if (value === undefined) delete next[key];
        else (next as Record<string, unknown>)[key] = structuredClone(value);
      }
      return next;
    },
    { actor: options.actor?.username, expectedVersion: options.expectedVersion, restoredFrom: rev },
  );
  await recordAudit(runtime, {
    actor: options.actor ?? null,
    action: 'article.restore',
    target: { type: 'article', id: articleId, label: saved.title },
    detail: `revision ${rev}`,
  });
  return toArticle(saved, await runtime.store.counters.get(articleId));
}
