/** Revisions (issue 14): every save is kept (who, when, which fields), listed and shown; `revision-restore.ts` saves one again. */
import type { ArticleRecord } from '../schemas/article.ts';
import type { Revision, RevisionSummary } from '../schemas/revision.ts';
import type { Runtime } from './runtime.ts';
import { notFound, serviceUnavailableOf } from './errors.ts';
import { errorMessage, logOncePerMinute } from './log.ts';

/** Fields an editor changes; a revision names those that differ from the previous save. */
export const TRACKED_FIELDS = [
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
  'status',
  'scheduledFor',
  'corrections',
  'access',
] as const;

/** Consecutive autosaves by one user within this window share one revision. */
export const AUTOSAVE_COALESCE_MS = 60_000;

/** Names of the tracked fields that differ between two records (all set ones for a new article). */
export function changedFields(before: ArticleRecord | undefined, after: ArticleRecord): string[] {
  return TRACKED_FIELDS.filter((key) => {
    if (!before) return after[key] !== undefined;
    return JSON.stringify(before[key]) !== JSON.stringify(after[key]);
  });
}

export type RevisionMeta = { by: string; at: string; autosave: boolean; restoredFrom?: number | undefined };

function snapshotOf(record: ArticleRecord): ArticleRecord {
  const { origin: _internal, ...rest } = record;
  return structuredClone(rest);
}

/**
 * Stores the revision of a save. An autosave right after another autosave by the same user (within
 * AUTOSAVE_COALESCE_MS of that revision's first write) updates that revision instead of adding one.
 * A failure is logged, never thrown: the save itself is on disk and must not be reported as failed.
 */
export async function recordRevision(
  runtime: Runtime,
  before: ArticleRecord | undefined,
  after: ArticleRecord,
  meta: RevisionMeta,
): Promise<void> {
  try {
    const version = after.version ?? 1;
    if (meta.autosave) {
      const latest = await runtime.store.revisions.latest(after.id);
      const startedAt = latest ? Date.parse(latest.startedAt ?? latest.at) : NaN;
      if (latest?.autosave && latest.by === meta.by && Date.parse(meta.at) - startedAt < AUTOSAVE_COALESCE_MS) {
        const fields = [...new Set([...latest.fields, ...changedFields(before, after)])];
        await runtime.store.revisions.save({
          ...latest,
          version,
          at: meta.at,
          startedAt: latest.startedAt ?? latest.at,
          fields,
          article: snapshotOf(after),
        });
        return;
      }
    }
    const revision: Revision = {
      articleId: after.id,
      rev: version,
      version,
      at: meta.at,
      by: meta.by,
      fields: changedFields(before, after),
      autosave: meta.autosave,
      article: snapshotOf(after),
    };
    if (meta.restoredFrom !== undefined) revision.restoredFrom = meta.restoredFrom;
    await runtime.store.revisions.save(revision);
  } catch (error) {
    // A database outage fails every save's revision alike: one line a minute says so.
    if (serviceUnavailableOf(error))
      logOncePerMinute(
        runtime.log,
        'revision-unavailable',
        { component: 'revisions', articleId: after.id, err: errorMessage(error) },
        `[revisions] could not store the revision of article ${after.id}: ${errorMessage(error)}`,
      );
    else
      runtime.log.error(
        { component: 'revisions', articleId: after.id, err: error },
        `[revisions] could not store the revision of article ${after.id}`,
      );
  }
}

export function toRevisionSummary(revision: Revision): RevisionSummary {
  const { article: _snapshot, ...summary } = revision;
  return summary;
}

/** Revisions of an existing article, newest first, without their snapshots. */
export async function listRevisions(runtime: Runtime, articleId: string): Promise<RevisionSummary[]> {
  if (!(await runtime.store.articles.get(articleId))) throw notFound('Article');
  return (await runtime.store.revisions.list(articleId)).map(toRevisionSummary);
}

/** One revision with the article as it was saved. */
export async function getRevision(runtime: Runtime, articleId: string, rev: number): Promise<Revision> {
  if (!(await runtime.store.articles.get(articleId))) throw notFound('Article');
  const revision = await runtime.store.revisions.get(articleId, rev);
  if (!revision) throw notFound('Revision');
  return revision;
}
