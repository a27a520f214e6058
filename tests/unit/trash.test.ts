/** The trash on a real store: slugs stay reserved, restore brings comments and votes back, the purge after 30 days (injectable clock). */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createArticle, deleteArticle, updateArticle } from '../../src/server/articles.ts';
import { purgeExpiredTrash, restoreFromTrash } from '../../src/server/trash.ts';
import { setClock } from '../../src/server/clock.ts';
import { closeQuietly, makeRuntime } from './support.ts';

const DAY = 24 * 3600 * 1000;
let runtime: Awaited<ReturnType<typeof makeRuntime>> | undefined;

afterEach(async () => {
  setClock(undefined);
  await closeQuietly(runtime?.store);
  runtime = undefined;
});

const input = (title: string) => ({
  title,
  section: 'world' as const,
  tags: [],
  authorName: 'Desk',
  isBreaking: false,
  isEditorsPick: false,
  status: 'published' as const,
  bodyHtml: '<p>Text</p>',
});

/** An editor, as the API passes the signed-in user to the article functions. */
const EDITOR = { id: 'user-editor', username: 'editor', role: 'editor' } as const;

describe('trash', () => {
  it('keeps comments and votes through a restore, and purges them 30 days after the delete', async () => {
    runtime = await makeRuntime();
    const start = Date.UTC(2026, 0, 1);
    setClock(() => start);
    const article = await createArticle(runtime, input('Kept for a while'), EDITOR);
    await runtime.store.comments.insert({
      id: 'c1',
      articleId: article.id,
      authorName: 'R',
      authorEmail: 'r@example.com',
      content: 'Hi',
      status: 'visible',
      createdAt: new Date(start).toISOString(),
    });
    await runtime.store.counters.vote(article.id, 'visitor-1', 'like');

    await deleteArticle(runtime, article.id, EDITOR);
    expect(await runtime.store.articles.get(article.id)).toBeUndefined();
    const restored = await restoreFromTrash(runtime, article.id);
    expect(restored).toMatchObject({ slug: article.slug, likes: 1, status: 'published' });
    expect(await runtime.store.comments.count({ articleId: article.id })).toBe(1);

    await deleteArticle(runtime, article.id, EDITOR);
    setClock(() => start + 30 * DAY - 1);
    expect(await purgeExpiredTrash(runtime)).toBe(0);
    expect(await runtime.store.trash.slugExists(article.slug)).toBe(true);
    setClock(() => start + 30 * DAY);
    expect(await purgeExpiredTrash(runtime)).toBe(1);
    expect(await runtime.store.trash.get(article.id)).toBeUndefined();
    expect(await runtime.store.trash.slugExists(article.slug)).toBe(false);
    expect(await runtime.store.comments.count({ articleId: article.id })).toBe(0);
    expect((await runtime.store.counters.get(article.id)).likes).toBe(0);
    expect(await runtime.store.revisions.list(article.id)).toEqual([]);
  });

  it('stores each entry and revision as its own small file, and reads the trash back after a restart', async () => {
    runtime = await makeRuntime(undefined, 'lowdb');
    const article = await createArticle(runtime, input('Small files'));
    await updateArticle(runtime, article.id, { dek: 'changed' }, undefined, { actor: 'editor' });
    await deleteArticle(runtime, article.id);
    const files = fs.readdirSync(runtime.dataDir, { recursive: true }).map(String);
    expect(files.filter((f) => f.startsWith(`revisions${path.sep}`) && f.endsWith('.json'))).toHaveLength(2);
    expect(files.filter((f) => f.startsWith(`trash${path.sep}`) && f.endsWith(`${article.id}.json`))).toHaveLength(1);
    await runtime.store.close();
    const reopened = await makeRuntime(runtime.dataDir, 'lowdb');
    runtime = reopened;
    expect((await reopened.store.trash.list()).map((e) => e.article.id)).toEqual([article.id]);
    expect(await reopened.store.trash.slugExists(article.slug)).toBe(true);
  });
});

describe('replaceIfVersion', () => {
  it('swaps only when the stored version matches, in one step', async () => {
    runtime = await makeRuntime();
    const article = await createArticle(runtime, input('CAS'));
    const record = (await runtime.store.articles.get(article.id))!;
    const [a, b] = await Promise.all([
      runtime.store.articles.replaceIfVersion({ ...record, title: 'A' }, 1),
      runtime.store.articles.replaceIfVersion({ ...record, title: 'B' }, 1),
    ]);
    // Exactly one wins (on PostgreSQL either UPDATE may commit first); the other is told what won.
    const outcomes = [a, b];
    const saved = outcomes.filter((o) => o && 'saved' in o);
    const conflicts = outcomes.filter((o) => o && 'conflict' in o);
    expect([saved.length, conflicts.length]).toEqual([1, 1]);
    const winner = (saved[0] as { saved: { title: string } }).saved.title;
    expect(conflicts[0]).toMatchObject({ conflict: { title: winner, version: 2 } });
    expect(await runtime.store.articles.get(article.id)).toMatchObject({ title: winner, version: 2 });
    expect(await runtime.store.articles.replaceIfVersion({ ...record, id: 'missing' }, 1)).toBeUndefined();
  });
});
