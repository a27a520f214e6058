/** Article domain: listing with visibility rules, editor writes, votes, views and scheduled publishing. */
import { randomUUID } from 'node:crypto';
import type {
  Article,
  ArticleCounters,
  ArticleFilter,
  ArticleInput,
  ArticleListQuery,
  ArticleRecord,
  ArticleStats,
  ArticleStatus,
  ArticleSummary,
  ArticleUpdate,
  SearchQuery,
  VoteKind,
  VoteResult,
} from '../schemas/article.ts';
import type { Page } from '../store/types.ts';
import { AppError, badRequest, notFound } from './errors.ts';
import { computeReadingTime, sanitizeBodyHtml } from './html.ts';
import { nowIso } from './clock.ts';
import { emitArticleChanges, trackArticleWrite, type Runtime } from './runtime.ts';
import type { User } from '../schemas/auth.ts';
import type { AuditAction } from '../schemas/audit.ts';
import { actionsForStatusChange, can, type Action } from '../lib/permissions.ts';
import { assertCan } from './permissions.ts';
import { recordAudit } from './audit.ts';
import { recordRevision } from './revisions.ts';
import { slugifyText } from '../schemas/slug.ts';
import { publicBodyOf } from '../schemas/teaser.ts';

/**
 * Who is asking: anonymous readers see published articles only; signed-in roles see unpublished
 * ones too, and with `ownerId` (authors, contributors) listings hold only the articles they created.
 */
export type Viewer = { isAdmin: boolean; ownerId?: string | undefined };

/** The signed-in user behind an editor write: permissions are checked, and the audit log names them. */
export type Actor = Pick<User, 'id' | 'username' | 'role'>;

const MAX_SLUG_LENGTH = 80;

/** An article's slug: the site's slug rule at 80 characters, `article` for a title with no letter or digit. */
export function slugify(title: string): string {
  return slugifyText(title, MAX_SLUG_LENGTH) || 'article';
}

/** A slug not used by another article: `title`, `title-2`, `title-3`... */
export async function uniqueSlug(runtime: Runtime, title: string, exceptId?: string): Promise<string> {
  const base = slugify(title);
  let candidate = base;
  // A trashed article keeps its slug reserved until it is purged, so a restore never collides.
  const taken = async (slug: string) =>
    (await runtime.store.articles.slugExists(slug, exceptId)) || (await runtime.store.trash.slugExists(slug));
  for (let n = 2; await taken(candidate); n++) candidate = `${base}-${n}`;
  return candidate;
}

/** An article's version: records stored before versions existed read as 1. */
export function versionOf(record: ArticleRecord): number {
  return record.version ?? 1;
}

/** The ETag of an article version (strong: a version names exactly one state). */
export function etagOf(version: number): string {
  return `"${version}"`;
}

export function toArticle(record: ArticleRecord, counters: ArticleCounters): Article {
  const { origin: _internal, version, ...rest } = record;
  return { ...rest, access: record.access ?? 'public', ...counters, version: version ?? 1 };
}

/** An article as a viewer may read it: staff keep the whole body (they edit it), readers get publicBodyOf's. */
function toArticleFor(record: ArticleRecord, counters: ArticleCounters, viewer: Viewer): Article {
  const article = toArticle(record, counters);
  return viewer.isAdmin ? article : { ...article, bodyHtml: publicBodyOf(record) };
}

export function toSummary(article: ArticleRecord): ArticleSummary {
  return {
    id: article.id,
    slug: article.slug,
    title: article.title,
    dek: article.dek,
    heroImage: article.heroImage,
    section: article.section,
    sourceLabel: article.sourceLabel,
    sourceUrl: article.sourceUrl,
    publishedAt: article.publishedAt,
    readingTime: article.readingTime,
    isBreaking: article.isBreaking,
    isEditorsPick: article.isEditorsPick,
    authorName: article.authorName,
  };
}

async function withCounters(runtime: Runtime, records: ArticleRecord[], viewer: Viewer): Promise<Article[]> {
  const counters = await runtime.store.counters.getMany(records.map((r) => r.id));
  return records.map((r) => toArticleFor(r, counters.get(r.id)!, viewer));
}

function pageOf(query: { page: number; pageSize: number; limit?: number | undefined }): Page {
  if (query.limit !== undefined) return { offset: 0, limit: query.limit };
  return { offset: (query.page - 1) * query.pageSize, limit: query.pageSize };
}

/** The store filter for a list query, with the visibility rule applied. */
export function articleFilter(query: Omit<ArticleListQuery, 'page' | 'pageSize' | 'limit'>, viewer: Viewer): ArticleFilter {
  let statuses: ArticleStatus[] | undefined = query.status ? [query.status] : undefined;
  if (!viewer.isAdmin) statuses = statuses ? statuses.filter((s) => s === 'published') : ['published'];
  return {
    search: query.search,
    section: query.section,
    statuses,
    source: query.source,
    dateFrom: query.dateFrom,
    dateTo: query.dateTo,
    isBreaking: query.isBreaking,
    // Published articles are public: asking for those alone is not limited to one's own.
    createdBy: query.status === 'published' ? undefined : viewer.ownerId,
  };
}

export async function listArticles(runtime: Runtime, query: ArticleListQuery, viewer: Viewer): Promise<Article[]> {
  const records = await runtime.store.articles.list(articleFilter(query, viewer), pageOf(query), 'recent');
  return withCounters(runtime, records, viewer);
}

export async function countArticles(
  runtime: Runtime,
  query: Omit<ArticleListQuery, 'page' | 'pageSize' | 'limit'>,
  viewer: Viewer,
): Promise<number> {
  return runtime.store.articles.count(articleFilter(query, viewer));
}

export async function getArticleStats(runtime: Runtime): Promise<ArticleStats> {
  return runtime.store.articles.stats();
}

function visible(record: ArticleRecord | undefined, viewer: Viewer): record is ArticleRecord {
  if (record === undefined) return false;
  if (record.status === 'published') return true;
  return viewer.isAdmin && (viewer.ownerId === undefined || record.createdBy === viewer.ownerId);
}

export async function getArticle(runtime: Runtime, id: string, viewer: Viewer): Promise<Article> {
  const record = await runtime.store.articles.get(id, { body: true });
  if (!visible(record, viewer)) throw notFound('Article');
  return toArticleFor(record, await runtime.store.counters.get(id), viewer);
}

export async function getArticleBySlug(runtime: Runtime, slug: string, viewer: Viewer): Promise<Article> {
  const record = await runtime.store.articles.getBySlug(slug, { body: true });
  if (!visible(record, viewer)) throw notFound('Article');
  return toArticleFor(record, await runtime.store.counters.get(record.id), viewer);
}

/** Throws 404 when the actor may not even read the article, 403 when they may read but not do `action` to it. */
export async function assertArticleAccess(runtime: Runtime, id: string, actor: Actor, action: Action): Promise<void> {
  const record = await runtime.store.articles.get(id);
  if (!record || !mayRead(actor, record)) throw notFound('Article');
  assertCan(actor, action, record);
}

/** Published articles are public; others only for roles that may read them (authors, contributors: their own). */
function mayRead(actor: Actor, record: ArticleRecord): boolean {
  return record.status === 'published' || can(actor, 'article.read', record);
}

/** Checks and normalises status/scheduledFor: scheduledFor exists only on scheduled articles. */
function applyStatus(record: ArticleRecord, status: ArticleStatus, scheduledFor: string | null | undefined, now: string): ArticleRecord {
  const next: ArticleRecord = { ...record, status };
  if (status === 'scheduled') {
    const when = scheduledFor === undefined ? record.scheduledFor : (scheduledFor ?? undefined);
    if (!when)
      throw badRequest('A scheduled article needs scheduledFor', [{ path: ['scheduledFor'], message: 'Please select a publish date.' }]);
    next.scheduledFor = new Date(when).toISOString();
  } else {
    if (scheduledFor)
      throw badRequest('scheduledFor is only allowed with status "scheduled"', [
        { path: ['scheduledFor'], message: 'Only scheduled articles have a publish date' },
      ]);
    delete next.scheduledFor;
  }
  if (status === 'published' && !next.publishedAt) next.publishedAt = now;
  return next;
}

function dropEmpty(record: ArticleRecord): ArticleRecord {
  const out = { ...record };
  for (const key of ['dek', 'heroImage', 'sourceLabel', 'sourceUrl', 'scheduledFor', 'publishedAt'] as const) {
    if (out[key] === undefined || out[key] === '') delete out[key];
  }
  // Public is the default an absent field reads as: a public article's record stays as it was before access levels.
  if (out.access === undefined || out.access === 'public') delete out.access;
  return out;
}

/** Builds a new article record from editor (or feed) input; does not store it. */
export async function buildArticle(runtime: Runtime, input: ArticleInput, now = nowIso()): Promise<ArticleRecord> {
  const bodyHtml = sanitizeBodyHtml(input.bodyHtml ?? '');
  const base: ArticleRecord = {
    id: randomUUID(),
    title: input.title,
    slug: await uniqueSlug(runtime, input.title),
    dek: input.dek,
    bodyHtml,
    heroImage: input.heroImage,
    section: input.section,
    tags: input.tags,
    authorName: input.authorName,
    sourceLabel: input.sourceLabel,
    sourceUrl: input.sourceUrl,
    createdAt: now,
    updatedAt: now,
    readingTime: input.readingTime ?? computeReadingTime(bodyHtml),
    isBreaking: input.isBreaking,
    isEditorsPick: input.isEditorsPick,
    status: 'draft',
    access: input.access ?? 'public',
  };
  return dropEmpty(applyStatus(base, input.status, input.scheduledFor, now));
}

/** The audit action of a status change, if it is one the log keeps. */
function statusAuditAction(from: ArticleStatus | undefined, to: ArticleStatus | undefined): AuditAction | undefined {
  if (from === to) return undefined;
  if (to === 'published') return 'article.publish';
  if (to === 'scheduled') return 'article.schedule';
  if (from === 'published') return 'article.unpublish';
  return undefined;
}

async function auditStatusChange(
  runtime: Runtime,
  actor: Actor | null,
  before: ArticleRecord | undefined,
  after: ArticleRecord,
): Promise<void> {
  const action = statusAuditAction(before?.status, after.status);
  if (!action) return;
  const detail =
    action === 'article.unpublish' ? `now ${after.status}` : action === 'article.schedule' ? `for ${after.scheduledFor}` : undefined;
  await recordAudit(runtime, { actor, action, target: { type: 'article', id: after.id, label: after.title }, detail });
}

/** Creates an article; with an actor (an editor call) the role is checked and the article is theirs. */
export async function createArticle(runtime: Runtime, input: ArticleInput, actor?: Actor): Promise<Article> {
  let record = await buildArticle(runtime, input);
  if (actor) {
    record = { ...record, createdBy: actor.id };
    assertCan(actor, 'article.create');
    for (const action of actionsForStatusChange(undefined, record.status)) assertCan(actor, action, record);
  }
  await trackArticleWrite(runtime, async () => {
    await runtime.store.articles.insert(record);
    // Regeneration is queued first, right after the write, as before revisions existed.
    await emitArticleChanges(runtime, [{ before: undefined, after: record }]);
  });
  if (actor) await auditStatusChange(runtime, actor, undefined, record);
  await recordRevision(runtime, undefined, record, { by: actor?.username ?? 'system', at: record.createdAt, autosave: false });
  return toArticle(record, { likes: 0, dislikes: 0, views: 0 });
}

/** Who saves, and what they believe they are saving over (issue 14). */
export type SaveOptions = {
  /** Username recorded in the revision; `system` when none. */
  actor?: string | undefined;
  /** The version the caller edited (If-Match or `version` in the body); stale answers 409. */
  expectedVersion?: number | undefined;
  autosave?: boolean | undefined;
  restoredFrom?: number | undefined;
};

/** 409 with the current article, so the editor can say who changed it and offer to reload or compare. */
export async function conflictWith(runtime: Runtime, current: ArticleRecord): Promise<AppError> {
  const latest = await runtime.store.revisions.latest(current.id);
  const changedBy = latest?.by;
  const changedAt = latest?.at ?? current.updatedAt;
  return new AppError(
    409,
    `This article was changed${changedBy ? ` by ${changedBy}` : ''} since you opened it (now version ${versionOf(current)}). Reload or compare before saving.`,
    {
      headers: { ETag: etagOf(versionOf(current)) },
      details: { current: toArticle(current, await runtime.store.counters.get(current.id)), changedBy: changedBy ?? null, changedAt },
    },
  );
}

/**
 * Saves a change with compare-and-set in the store: `build` derives the next record from the
 * current one. With an expected version a mismatch is a 409 and nothing changes; without one
 * (the spec's callers) the change is re-applied to the newer record, so no write is lost either.
 * Every save stores a revision.
 */
export async function commitArticle(
  runtime: Runtime,
  id: string,
  build: (before: ArticleRecord, now: string) => ArticleRecord,
  options: SaveOptions = {},
): Promise<ArticleRecord> {
  for (let attempt = 0; ; attempt++) {
    const before = await runtime.store.articles.get(id);
    if (!before) throw notFound('Article');
    const now = nowIso();
    const next = build(before, now);
    const result = await trackArticleWrite(runtime, async () => {
      // The store compares and swaps in one step; checking here first would race with other saves.
      const swapped = await runtime.store.articles.replaceIfVersion(next, options.expectedVersion ?? versionOf(before));
      // Regeneration is queued first, right after the write, as before revisions existed.
      if (swapped && 'saved' in swapped) await emitArticleChanges(runtime, [{ before, after: swapped.saved }]);
      return swapped;
    });
    if (!result) throw notFound('Article');
    if ('conflict' in result) {
      if (options.expectedVersion !== undefined || attempt >= 10) throw await conflictWith(runtime, result.conflict);
      continue;
    }
    const saved = result.saved;
    await recordRevision(runtime, before, saved, {
      by: options.actor ?? 'system',
      at: now,
      autosave: options.autosave ?? false,
      restoredFrom: options.restoredFrom,
    });
    return saved;
  }
}

/** The next record for an editor update (PUT /api/articles/{id}), without storing it. */
function applyUpdate(before: ArticleRecord, update: ArticleUpdate, now: string): ArticleRecord {
  const { status, scheduledFor, bodyHtml, readingTime, version: _version, autosave: _autosave, ...fields } = update;
  let next: ArticleRecord = { ...before, updatedAt: now };
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) (next as Record<string, unknown>)[key] = value;
  }
  // Optional text fields sent empty are cleared (the editor omits them when empty).
  for (const key of ['dek', 'heroImage', 'sourceLabel', 'sourceUrl'] as const) {
    if (key in update && update[key] === undefined) delete next[key];
  }
  if (bodyHtml !== undefined) {
    next.bodyHtml = sanitizeBodyHtml(bodyHtml);
    if (readingTime === undefined) next.readingTime = computeReadingTime(next.bodyHtml);
  }
  if (readingTime !== undefined) next.readingTime = readingTime;
  next = applyStatus(next, status ?? before.status, scheduledFor, now);
  return dropEmpty(next);
}

/** Whether the actor may apply this update to the article as it now is (404 for what they may not even read). */
function assertMayUpdate(actor: Actor, before: ArticleRecord, status: ArticleStatus | undefined): void {
  // Someone who may not even read it learns nothing about whether it exists.
  if (!mayRead(actor, before)) throw notFound('Article');
  assertCan(actor, 'article.edit', before);
  if (status !== undefined) for (const action of actionsForStatusChange(before.status, status)) assertCan(actor, action, before);
}

/** Applies an editor change; with an actor, their role must allow editing this article and any status change. */
export async function updateArticle(
  runtime: Runtime,
  id: string,
  update: ArticleUpdate,
  actor?: Actor,
  options: SaveOptions = {},
): Promise<Article> {
  if (update.autosave && (update.status !== undefined || update.scheduledFor !== undefined)) {
    // An autosave keeps the text safe; it never publishes, schedules or unpublishes.
    throw badRequest('An autosave cannot change status or scheduledFor', [{ path: ['autosave'], message: 'Autosave saves content only' }]);
  }
  let before: ArticleRecord | undefined;
  const saved = await commitArticle(
    runtime,
    id,
    (current, now) => {
      // Checked on the record the save applies to, inside the compare-and-set loop.
      if (actor) assertMayUpdate(actor, current, update.status);
      before = current;
      return applyUpdate(current, update, now);
    },
    {
      ...options,
      actor: options.actor ?? actor?.username,
      expectedVersion: options.expectedVersion ?? update.version,
      autosave: update.autosave ?? options.autosave,
    },
  );
  if (actor) await auditStatusChange(runtime, actor, before, saved);
  return toArticle(saved, await runtime.store.counters.get(id));
}

/**
 * Moves an article to the trash (issue 14): it disappears for readers like a delete, while its
 * comments and votes stay where they are, so a restore brings them back; purged after 30 days.
 */
export async function deleteArticle(runtime: Runtime, id: string, actor?: Actor): Promise<void> {
  const before = await runtime.store.articles.get(id);
  if (!before) throw notFound('Article');
  if (actor) {
    if (!mayRead(actor, before)) throw notFound('Article');
    assertCan(actor, 'article.delete', before);
  }
  // The trash entry is on disk before the article goes: a crash in between loses nothing.
  await runtime.store.trash.put({ article: before, deletedAt: nowIso(), deletedBy: actor?.username ?? 'system' });
  await trackArticleWrite(runtime, async () => {
    try {
      await runtime.store.articles.delete(id);
    } catch (error) {
      // Not deleted (a full disk): the article stays where it was, so it must not be in the trash too.
      await runtime.store.trash.delete(id).catch(() => {});
      throw error;
    }
    await emitArticleChanges(runtime, [{ before, after: undefined }]);
  });
  if (actor) await recordAudit(runtime, { actor, action: 'article.delete', target: { type: 'article', id, label: before.title } });
}

/** Publishes every scheduled article that came due, exactly once each; answers those published. */
export async function publishDueArticles(runtime: Runtime, now = nowIso()): Promise<ArticleRecord[]> {
  const due = await runtime.store.articles.listDue(now);
  const changes = await trackArticleWrite(runtime, async () => {
    const published = [];
    for (const article of due) {
      const after = await runtime.store.articles.publishIfScheduled(article.id, now);
      if (after) published.push({ before: article, after });
    }
    await emitArticleChanges(runtime, published);
    return published;
  });
  for (const change of changes) await auditStatusChange(runtime, null, change.before, change.after);
  return changes.map((c) => c.after);
}

export async function voteOnArticle(runtime: Runtime, id: string, visitorId: string, kind: VoteKind): Promise<VoteResult> {
  const record = await runtime.store.articles.get(id);
  if (!visible(record, { isAdmin: false })) throw notFound('Article');
  const { likes, dislikes, vote } = await runtime.store.counters.vote(id, visitorId, kind);
  return { likes, dislikes, vote };
}

export async function getVoteState(runtime: Runtime, id: string, visitorId: string | undefined): Promise<VoteResult> {
  const record = await runtime.store.articles.get(id);
  if (!visible(record, { isAdmin: false })) throw notFound('Article');
  const { likes, dislikes } = await runtime.store.counters.get(id);
  const vote = visitorId ? ((await runtime.store.counters.visitorVote(id, visitorId)) ?? null) : null;
  return { likes, dislikes, vote };
}

export async function adjustArticleVotes(runtime: Runtime, id: string, kind: VoteKind, amount: number): Promise<ArticleCounters> {
  if (!(await runtime.store.articles.get(id))) throw notFound('Article');
  return runtime.store.counters.adjust(id, kind, amount);
}

/** Published articles matching a search query, by relevance then recency. */
export async function searchArticles(runtime: Runtime, query: SearchQuery): Promise<{ items: ArticleSummary[]; total: number }> {
  const filter: ArticleFilter = { statuses: ['published'], section: query.section === 'all' ? undefined : query.section };
  const { items, total } = await runtime.store.articles.search(query.q, filter, pageOf(query));
  return { items: items.map(toSummary), total };
}

/** How many published articles match a search query (the total behind the paged results). */
export async function countSearchResults(runtime: Runtime, query: Pick<SearchQuery, 'q' | 'section'>): Promise<number> {
  const filter: ArticleFilter = { statuses: ['published'], section: query.section === 'all' ? undefined : query.section };
  const { total } = await runtime.store.articles.search(query.q, filter, { offset: 0, limit: 0 });
  return total;
}
