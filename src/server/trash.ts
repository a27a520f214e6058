/** The trash (issue 14): deleted articles wait 30 days for a restore (slug, comments and votes included), then are purged. */
import type { Article } from '../schemas/article.ts';
import type { TrashEntry, TrashItem } from '../schemas/revision.ts';
import type { Runtime } from './runtime.ts';
import { emitArticleChanges, trackArticleWrite } from './runtime.ts';
import { notFound } from './errors.ts';
import { nowMs } from './clock.ts';
import { toArticle, type Actor } from './articles.ts';
import { recordAudit } from './audit.ts';

export const TRASH_RETENTION_DAYS = 30;
const RETENTION_MS = TRASH_RETENTION_DAYS * 24 * 60 * 60 * 1000;
/** How often the server purges expired entries (also once at start). */
export const TRASH_PURGE_INTERVAL_MS = 60 * 60 * 1000;

export function purgeAtOf(entry: TrashEntry): string {
  return new Date(Date.parse(entry.deletedAt) + RETENTION_MS).toISOString();
}

function toTrashItem(entry: TrashEntry): TrashItem {
  const { article } = entry;
  return {
    id: article.id,
    title: article.title,
    slug: article.slug,
    section: article.section,
    status: article.status,
    deletedAt: entry.deletedAt,
    deletedBy: entry.deletedBy,
    purgeAt: purgeAtOf(entry),
  };
}

/** Trashed articles, most recently deleted first. */
export async function listTrash(runtime: Runtime): Promise<TrashItem[]> {
  return (await runtime.store.trash.list()).map(toTrashItem);
}

/** Puts a trashed article back as it was (same id, slug and status); its comments and votes never left. */
export async function restoreFromTrash(runtime: Runtime, id: string, actor?: Actor): Promise<Article> {
  const entry = await runtime.store.trash.get(id);
  if (!entry) throw notFound('Trashed article');
  // A crash between writing the entry and removing the article leaves both: then only the entry goes.
  if (!(await runtime.store.articles.get(id))) {
    // A new version, so an editor still open on the article before the delete cannot save over it unseen.
    const article = { ...entry.article, version: (entry.article.version ?? 1) + 1 };
    await trackArticleWrite(runtime, async () => {
      await runtime.store.articles.insert(article);
      await runtime.store.trash.delete(id);
      await emitArticleChanges(runtime, [{ before: undefined, after: article }]);
    });
  } else {
    await runtime.store.trash.delete(id);
  }
  const restored = (await runtime.store.articles.get(id))!;
  await recordAudit(runtime, {
    actor: actor ?? null,
    action: 'article.restore',
    target: { type: 'article', id, label: restored.title },
    detail: 'from the trash',
  });
  return toArticle(restored, await runtime.store.counters.get(id));
}

/** Deletes a trashed article for good: its comments, votes, views and revisions go with it. */
export async function purgeTrashed(runtime: Runtime, id: string): Promise<void> {
  if (!(await runtime.store.trash.get(id))) throw notFound('Trashed article');
  await runtime.store.comments.deleteForArticle(id);
  await runtime.store.counters.deleteArticle(id);
  await runtime.store.revisions.deleteForArticle(id);
  await runtime.store.live.deleteForArticle(id);
  // Last: until the entry is gone the slug stays reserved and the purge can be run again.
  await runtime.store.trash.delete(id);
}

/** Purges every entry older than 30 days (by the injectable clock); answers how many went. */
export async function purgeExpiredTrash(runtime: Runtime, now = nowMs()): Promise<number> {
  let purged = 0;
  for (const entry of await runtime.store.trash.list()) {
    if (Date.parse(purgeAtOf(entry)) > now) continue;
    await purgeTrashed(runtime, entry.article.id);
    purged++;
  }
  return purged;
}

/** The server's periodic purge: once at start, then hourly. */
export function startTrashPurge(runtime: Runtime): { stop(): void } {
  const run = () =>
    purgeExpiredTrash(runtime).catch((error: unknown) => runtime.log.error({ component: 'trash', err: error }, '[trash] purge failed'));
  void run();
  const timer = setInterval(run, TRASH_PURGE_INTERVAL_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
