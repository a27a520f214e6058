/** Restoring a revision (issue 14): its content saved again as a new version, through the one article save. */
import type { Article, ArticleRecord } from '../schemas/article.ts';
import type { Runtime } from './runtime.ts';
import { commitArticle, toArticle, type Actor } from './articles.ts';
import { recordAudit } from './audit.ts';
import { getRevision, TRACKED_FIELDS } from './revisions.ts';

/** What a restore brings back: every tracked field but status, schedule, corrections and access (restoring text never publishes). */
const NOT_RESTORED = ['status', 'scheduledFor', 'corrections', 'access'] as const;
export const RESTORED_FIELDS = TRACKED_FIELDS.filter(
  (key): key is Exclude<(typeof TRACKED_FIELDS)[number], (typeof NOT_RESTORED)[number]> =>
    !(NOT_RESTORED as readonly string[]).includes(key),
);

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
