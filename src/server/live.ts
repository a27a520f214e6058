/**
 * Live coverage (issue 35): editors start and end an article's coverage, pin key points and append
 * timestamped updates. All of it is stored beside the article, never as a new version of it, so an
 * editor with the article open meets no 409; each write queues the few files that show it.
 */
import { randomUUID } from 'node:crypto';
import type { ArticleRecord } from '../schemas/article.ts';
import type { LiveCoverage, LiveCoverageInput, LiveState, LiveUpdate, LiveUpdateEdit, LiveUpdateInput } from '../schemas/live.ts';
import type { AuditAction } from '../schemas/audit.ts';
import type { Action } from '../lib/permissions.ts';
import { AppError, notFound } from './errors.ts';
import { assertArticleAccess, type Actor } from './articles.ts';
import { recordAudit } from './audit.ts';
import { nowIso } from './clock.ts';
import { sanitizeBodyHtml, htmlToText } from './html.ts';
import { emitLiveChange, type Runtime } from './runtime.ts';

/** The article, once the actor may do `action` to it (404 for what they may not read, 403 for what they may not do). */
async function articleFor(runtime: Runtime, articleId: string, actor: Actor, action: Action): Promise<ArticleRecord> {
  await assertArticleAccess(runtime, articleId, actor, action);
  const record = await runtime.store.articles.get(articleId);
  if (!record) throw notFound('Article');
  return record;
}

/** The first words of an update, for the audit log's detail. */
function excerptOf(html: string): string {
  const text = htmlToText(html);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

async function audit(runtime: Runtime, actor: Actor, action: AuditAction, article: ArticleRecord, detail?: string): Promise<void> {
  await recordAudit(runtime, { actor, action, target: { type: 'article', id: article.id, label: article.title }, detail });
}

/** The coverage and every update, newest first, for the editor's live panel. */
export async function getLiveState(runtime: Runtime, articleId: string, actor: Actor): Promise<LiveState> {
  await articleFor(runtime, articleId, actor, 'article.edit');
  return {
    coverage: (await runtime.store.live.getCoverage(articleId)) ?? null,
    updates: await runtime.store.live.listUpdates(articleId),
  };
}

/**
 * Starts or ends the coverage (roles that may publish the article) and/or replaces its key points
 * (roles that may edit it). Ending freezes the page; starting again reopens it with its updates.
 */
export async function setLiveCoverage(runtime: Runtime, articleId: string, input: LiveCoverageInput, actor: Actor): Promise<LiveCoverage> {
  const article = await articleFor(runtime, articleId, actor, input.status === undefined ? 'article.edit' : 'article.publish');
  const now = nowIso();
  const current = await runtime.store.live.getCoverage(articleId);
  if (!current && input.status !== 'live') throw new AppError(409, 'This article is not live: start the live coverage first');
  let next: LiveCoverage = current ?? { articleId, startedAt: now, keyPoints: [], updatedAt: now };
  const actions: AuditAction[] = [];
  if (input.status === 'live' && (!current || current.endedAt)) {
    const { endedAt: _ended, ...running } = next;
    next = current ? running : next;
    actions.push('live.start');
  }
  if (input.status === 'ended' && !next.endedAt) {
    next = { ...next, endedAt: now };
    actions.push('live.end');
  }
  if (input.keyPoints !== undefined && JSON.stringify(input.keyPoints) !== JSON.stringify(next.keyPoints)) {
    next = { ...next, keyPoints: input.keyPoints };
    actions.push('live.key-points');
  }
  if (actions.length === 0) return next;
  next = { ...next, updatedAt: now };
  await runtime.store.live.putCoverage(next);
  await emitLiveChange(runtime, article);
  for (const action of actions) await audit(runtime, actor, action, article);
  return next;
}

/** The running coverage of an article; 409 when it has none or it has ended (the page is frozen). */
async function runningCoverage(runtime: Runtime, articleId: string): Promise<LiveCoverage> {
  const coverage = await runtime.store.live.getCoverage(articleId);
  if (!coverage) throw new AppError(409, 'This article is not live: start the live coverage first');
  if (coverage.endedAt) throw new AppError(409, 'The live coverage has ended: start it again to post updates');
  return coverage;
}

/** Appends an update (its text sanitised as article bodies are); readers' pages show it within seconds. */
export async function addLiveUpdate(runtime: Runtime, articleId: string, input: LiveUpdateInput, actor: Actor): Promise<LiveUpdate> {
  const article = await articleFor(runtime, articleId, actor, 'article.edit');
  await runningCoverage(runtime, articleId);
  const bodyHtml = sanitizeBodyHtml(input.bodyHtml);
  if (!bodyHtml) throw new AppError(400, 'The update needs text', { issues: [{ path: ['bodyHtml'], message: 'The update needs text' }] });
  const now = nowIso();
  const update: LiveUpdate = {
    id: randomUUID(),
    articleId,
    bodyHtml,
    isBreaking: input.isBreaking,
    createdAt: now,
    updatedAt: now,
    by: actor.username,
    ...(input.image ? { image: input.image } : {}),
    ...(input.image && input.imageAlt ? { imageAlt: input.imageAlt } : {}),
  };
  await runtime.store.live.putUpdate(update);
  await emitLiveChange(runtime, article);
  await audit(runtime, actor, 'live.update.create', article, excerptOf(bodyHtml));
  return update;
}

/** Changes an update's text, image or highlight; it keeps its time and place. */
export async function editLiveUpdate(
  runtime: Runtime,
  articleId: string,
  updateId: string,
  edit: LiveUpdateEdit,
  actor: Actor,
): Promise<LiveUpdate> {
  const article = await articleFor(runtime, articleId, actor, 'article.edit');
  const before = await runtime.store.live.getUpdate(articleId, updateId);
  if (!before) throw notFound('Update');
  const next: LiveUpdate = { ...before, updatedAt: nowIso() };
  if (edit.bodyHtml !== undefined) {
    next.bodyHtml = sanitizeBodyHtml(edit.bodyHtml);
    if (!next.bodyHtml)
      throw new AppError(400, 'The update needs text', { issues: [{ path: ['bodyHtml'], message: 'The update needs text' }] });
  }
  if (edit.isBreaking !== undefined) next.isBreaking = edit.isBreaking;
  // A key sent empty clears it (the schema turns '' into undefined and keeps the key).
  if ('image' in edit) {
    if (edit.image) next.image = edit.image;
    else delete next.image;
  }
  if ('imageAlt' in edit) {
    if (edit.imageAlt) next.imageAlt = edit.imageAlt;
    else delete next.imageAlt;
  }
  if (!next.image) delete next.imageAlt;
  await runtime.store.live.putUpdate(next);
  await emitLiveChange(runtime, article);
  await audit(runtime, actor, 'live.update.edit', article, excerptOf(next.bodyHtml));
  return next;
}

export async function deleteLiveUpdate(runtime: Runtime, articleId: string, updateId: string, actor: Actor): Promise<void> {
  const article = await articleFor(runtime, articleId, actor, 'article.edit');
  const before = await runtime.store.live.getUpdate(articleId, updateId);
  if (!before || !(await runtime.store.live.deleteUpdate(articleId, updateId))) throw notFound('Update');
  await emitLiveChange(runtime, article);
  await audit(runtime, actor, 'live.update.delete', article, excerptOf(before.bodyHtml));
}
