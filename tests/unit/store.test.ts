/** The store contract on both implementations (lowdb on real files, PostgreSQL on a real cluster), then lowdb's file guarantees. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.ts';
import type { Article } from '../../src/schemas/article.ts';
import type { Session } from '../../src/schemas/auth.ts';
import type { Comment } from '../../src/schemas/comment.ts';
import type { Subscriber } from '../../src/schemas/newsletter.ts';
import type { NewsSource } from '../../src/schemas/source.ts';
import { articleRecord, closeQuietly, makeTempDir } from './support.ts';
import { readCollectionDocument, storeJsonFiles } from '../../src/store/lowdb/inspect.ts';
import { articleFile, bucketFile, voteSplitFile } from '../../src/store/lowdb/layout.ts';
import { databaseFor } from '../helpers/postgres.ts';

type Kind = 'lowdb' | 'pg';
let kind: Kind;
let dir: string;
let store: Store;

/** Opens the store of the kind under test; PostgreSQL gets one database per data folder (a reopen finds it again). */
async function open(folder: string, mode: 'write' | 'read' = 'write'): Promise<Store> {
  return openStore(folder, mode, { databaseUrl: kind === 'pg' ? await databaseFor(folder) : undefined });
}

afterEach(async () => {
  await closeQuietly(store);
});

/** The collections as readFile answers them (see readCollectionDocument). */
type ArticlesFile = { version: number; articles: Article[] };
type VotesFile = {
  votes: Record<string, Record<string, 'like' | 'dislike'>>;
  tallies: Record<string, { likes: number; dislikes: number }>;
};
type CountersFile = { views: Record<string, number> };
type CommentsFile = { comments: Comment[] };
type SubscribersFile = { subscribers: Subscriber[] };
type SessionsFile = { sessions: Record<string, Session> };

/** A collection as one document, read from the files on disk (not from the open store). */
function readFile<T = unknown>(name: string): T {
  return readCollectionDocument(dir, name) as T;
}

/** Checks of lowdb's files, skipped on PostgreSQL (its rows are checked through the interface). */
function onDisk(check: () => void): void {
  if (kind === 'lowdb') check();
}

describe.each(['lowdb', 'pg'] as const)('%s store', (storeKind) => {
  beforeEach(async () => {
    kind = storeKind;
    dir = makeTempDir();
    store = await open(dir);
  });

  describe('articles', () => {
    it('inserts, gets by id and slug, and stores a copy', async () => {
      const record = articleRecord({ slug: 'first' });
      await store.articles.insert(record);
      record.title = 'changed after insert';
      expect((await store.articles.get(record.id))?.title).not.toBe('changed after insert');
      expect((await store.articles.getBySlug('first'))?.id).toBe(record.id);
      expect(await store.articles.get('missing')).toBeUndefined();
      await expect(store.articles.insert(articleRecord({ id: record.id }))).rejects.toThrow(/exists/);
      onDisk(() => void expect(readFile<ArticlesFile>('articles').articles).toHaveLength(1));
    });

    it('inserts many at once as insert does each (listed, searched, kept), and none when one exists', async () => {
      const records = [1, 2, 3].map((n) => articleRecord({ slug: `bulk-${n}`, title: `Bulk heron ${n}` }));
      await store.articles.insertMany(records);
      records[0]!.title = 'changed after insert';
      expect((await store.articles.get(records[0]!.id))?.title).toBe('Bulk heron 1');
      expect((await store.articles.getBySlug('bulk-3'))?.id).toBe(records[2]!.id);
      expect(await store.articles.count({ statuses: ['published'] })).toBe(3);
      expect((await store.articles.search('heron', {}, { offset: 0, limit: 10 })).total).toBe(3);
      const clash = [articleRecord({ slug: 'bulk-4' }), articleRecord({ id: records[1]!.id })];
      await expect(store.articles.insertMany(clash)).rejects.toThrow(/exists/);
      expect(await store.articles.get(clash[0]!.id)).toBeUndefined();
      await store.close();
      store = await open(dir);
      expect((await store.articles.list({}, { offset: 0, limit: 10 })).map((a) => a.id).sort()).toEqual(records.map((r) => r.id).sort());
      onDisk(() => void expect(readFile<ArticlesFile>('articles').articles).toHaveLength(3));
    });

    it('lists newest first (publishedAt, else updatedAt) and pages', async () => {
      const a = articleRecord({ publishedAt: '2025-03-01T00:00:00.000Z' });
      const b = articleRecord({ status: 'draft', publishedAt: undefined, updatedAt: '2025-03-03T00:00:00.000Z' });
      const c = articleRecord({ publishedAt: '2025-03-02T00:00:00.000Z', updatedAt: '2025-03-05T00:00:00.000Z' });
      for (const r of [a, b, c]) await store.articles.insert(r);
      const ids = async (filter = {}, page = { offset: 0, limit: 10 }, sort?: 'recent' | 'updated') =>
        (await store.articles.list(filter, page, sort)).map((r) => r.id);
      expect(await ids()).toEqual([b.id, c.id, a.id]);
      expect(await ids({}, { offset: 1, limit: 1 })).toEqual([c.id]);
      expect(await ids({}, { offset: 0, limit: 10 }, 'updated')).toEqual([c.id, b.id, a.id]);
      expect(await ids({ statuses: ['published'] })).toEqual([c.id, a.id]);
      expect(await ids({ statuses: ['published'] }, { offset: 1, limit: 5 })).toEqual([a.id]);
    });

    it('filters by section, status, flags, source, dates and search, and counts agree', async () => {
      const records = [
        articleRecord({ section: 'tech', isBreaking: true, sourceLabel: 'Wire Service', publishedAt: '2025-05-10T12:00:00.000Z' }),
        articleRecord({ section: 'tech', isEditorsPick: true, tags: ['chips'], publishedAt: '2025-05-11T12:00:00.000Z' }),
        articleRecord({
          section: 'world',
          status: 'draft',
          title: 'Chips in the draft',
          publishedAt: undefined,
          updatedAt: '2025-05-12T00:00:00.000Z',
        }),
        articleRecord({ section: 'world', status: 'archived', authorName: 'Ana Ruiz', publishedAt: '2025-05-09T12:00:00.000Z' }),
      ];
      for (const r of records) await store.articles.insert(r);
      const filters = [
        {},
        { section: 'tech' as const },
        { statuses: ['published' as const] },
        { statuses: ['published' as const], section: 'tech' as const },
        { statuses: ['draft' as const, 'archived' as const] },
        { isBreaking: true },
        { isBreaking: false },
        { isEditorsPick: true },
        { source: 'wire' },
        { search: 'chips' },
        { search: 'ana ruiz' },
        { dateFrom: '2025-05-10' },
        { dateTo: '2025-05-10' },
        { dateFrom: '2025-05-10T13:00:00Z', dateTo: '2025-05-11T23:00:00+00:00' },
        { statuses: ['published' as const], isBreaking: true },
      ];
      const expected = [4, 2, 2, 2, 2, 1, 3, 1, 1, 2, 1, 3, 2, 1, 1];
      for (const [i, filter] of filters.entries()) {
        const list = await store.articles.list(filter, { offset: 0, limit: 100 });
        expect(list.length, JSON.stringify(filter)).toBe(expected[i]);
        expect(await store.articles.count(filter), JSON.stringify(filter)).toBe(list.length);
      }
      expect((await store.articles.list({ source: 'wire' }, { offset: 0, limit: 10 }))[0]!.id).toBe(records[0]!.id);
      // dateTo is inclusive of its whole day.
      expect((await store.articles.list({ dateTo: '2025-05-10' }, { offset: 0, limit: 10 })).map((r) => r.id)).toEqual([
        records[0]!.id,
        records[3]!.id,
      ]);
    });

    it('keeps its indexes right after replace and delete', async () => {
      const record = articleRecord({ slug: 'old', status: 'draft', section: 'tech', title: 'Quantum computing' });
      await store.articles.insert(record);
      expect(await store.articles.count({ statuses: ['published'], section: 'tech' })).toBe(0);
      expect(await store.articles.replace({ ...record, status: 'published', slug: 'new', title: 'Fusion energy' })).toBe(true);
      expect(await store.articles.count({ statuses: ['published'], section: 'tech' })).toBe(1);
      expect(await store.articles.getBySlug('old')).toBeUndefined();
      expect((await store.articles.getBySlug('new'))?.title).toBe('Fusion energy');
      expect((await store.articles.search('quantum', {}, { offset: 0, limit: 10 })).total).toBe(0);
      expect((await store.articles.search('fusion', {}, { offset: 0, limit: 10 })).total).toBe(1);
      expect(await store.articles.replace(articleRecord({ id: 'missing' }))).toBe(false);
      expect(await store.articles.delete(record.id)).toBe(true);
      expect(await store.articles.delete(record.id)).toBe(false);
      expect(await store.articles.getBySlug('new')).toBeUndefined();
      expect(await store.articles.count({ statuses: ['published'] })).toBe(0);
      expect((await store.articles.search('fusion', {}, { offset: 0, limit: 10 })).total).toBe(0);
    });

    it('searches by relevance (title > dek > tags/author > body), then recency, with prefixes and filters', async () => {
      const body = articleRecord({ title: 'Other', bodyHtml: '<p>about <b>volcano</b> ash</p>', publishedAt: '2025-06-03T00:00:00.000Z' });
      const title = articleRecord({ title: 'Volcano erupts', publishedAt: '2025-06-01T00:00:00.000Z' });
      const dek = articleRecord({ title: 'Island news', dek: 'A volcano wakes', publishedAt: '2025-06-02T00:00:00.000Z' });
      const tag = articleRecord({ title: 'Travel', tags: ['volcano'], section: 'culture', publishedAt: '2025-06-04T00:00:00.000Z' });
      const older = articleRecord({ title: 'Volcano dormant', publishedAt: '2024-01-01T00:00:00.000Z' });
      const draft = articleRecord({ title: 'Volcano draft', status: 'draft' });
      for (const r of [body, title, dek, tag, older, draft]) await store.articles.insert(r);
      const page = { offset: 0, limit: 10 };
      const published = { statuses: ['published' as const] };
      const result = await store.articles.search('VOLCANO', published, page);
      expect(result.items.map((r) => r.id)).toEqual([title.id, older.id, dek.id, tag.id, body.id]);
      expect(result.total).toBe(5);
      expect((await store.articles.search('volc', published, page)).total).toBe(5);
      expect((await store.articles.search('volcano ash', published, page)).items.map((r) => r.id)).toEqual([body.id]);
      expect((await store.articles.search('volcano', { ...published, section: 'culture' }, page)).items.map((r) => r.id)).toEqual([tag.id]);
      expect((await store.articles.search('volcano', {}, page)).total).toBe(6);
      const paged = await store.articles.search('volcano', published, { offset: 1, limit: 2 });
      expect(paged.items.map((r) => r.id)).toEqual([older.id, dek.id]);
      expect(paged.total).toBe(5);
      expect((await store.articles.search('   ', published, page)).total).toBe(0);
      // A page with no rows still carries the total.
      expect(await store.articles.search('volcano', published, { offset: 0, limit: 0 })).toEqual({ items: [], total: 5 });
      expect(await store.articles.search('volcano', published, { offset: 50, limit: 5 })).toEqual({ items: [], total: 5 });
    });

    it('answers stats, slugs, origins and due articles; publishes a scheduled one exactly once', async () => {
      const scheduled = articleRecord({ status: 'scheduled', publishedAt: undefined, scheduledFor: '2025-01-01T10:00:00.000Z' });
      const later = articleRecord({ status: 'scheduled', publishedAt: undefined, scheduledFor: '2099-01-01T10:00:00.000Z' });
      const ingested = articleRecord({ origin: { sourceId: 'src', guid: 'guid-1', canonicalUrl: 'https://x.example/a' } });
      const draft = articleRecord({ status: 'draft', publishedAt: undefined });
      for (const r of [scheduled, later, ingested, draft]) await store.articles.insert(r);
      expect(await store.articles.stats()).toEqual({ totalArticles: 4, published: 1, drafts: 1, scheduled: 2, archived: 0 });
      expect(await store.articles.slugExists(ingested.slug)).toBe(true);
      expect(await store.articles.slugExists(ingested.slug, ingested.id)).toBe(false);
      expect(await store.articles.slugExists('free')).toBe(false);
      expect((await store.articles.findByOrigin('src', 'guid-1'))?.id).toBe(ingested.id);
      expect(await store.articles.findByOrigin('other', 'guid-1')).toBeUndefined();
      expect((await store.articles.findByCanonicalUrl('https://x.example/a'))?.id).toBe(ingested.id);
      expect((await store.articles.listDue('2025-06-01T00:00:00.000Z')).map((r) => r.id)).toEqual([scheduled.id]);
      const now = '2025-06-01T00:00:00.000Z';
      const [first, second] = await Promise.all([
        store.articles.publishIfScheduled(scheduled.id, now),
        store.articles.publishIfScheduled(scheduled.id, now),
      ]);
      expect([first, second].filter(Boolean)).toHaveLength(1);
      const published = (await store.articles.get(scheduled.id))!;
      expect(published).toMatchObject({ status: 'published', publishedAt: now });
      expect(published.scheduledFor).toBeUndefined();
      expect(await store.articles.publishIfScheduled(draft.id, now)).toBeUndefined();
      expect(await store.articles.listDue(now)).toEqual([]);
    });

    it('lists and counts each status newest first as articles move between them, and again after a reopen', async () => {
      const at = (day: string) => `2025-03-${day}T08:00:00.000Z`;
      const draftA = articleRecord({ status: 'draft', publishedAt: undefined, updatedAt: at('02'), section: 'world' });
      const draftB = articleRecord({ status: 'draft', publishedAt: undefined, updatedAt: at('04'), section: 'business' });
      const soon = articleRecord({ status: 'scheduled', publishedAt: undefined, updatedAt: at('03'), scheduledFor: at('05') });
      const live = articleRecord({ publishedAt: at('01'), updatedAt: at('01') });
      for (const r of [draftA, draftB, soon, live]) await store.articles.insert(r);
      const ids = async (filter: Parameters<Store['articles']['list']>[0], offset = 0) =>
        (await store.articles.list(filter, { offset, limit: 10 })).map((r) => r.id);
      const check = async (expected: Record<'draft' | 'scheduled' | 'archived', string[]>) => {
        for (const [status, list] of Object.entries(expected) as ['draft' | 'scheduled' | 'archived', string[]][]) {
          expect(await ids({ statuses: [status] })).toEqual(list);
          expect(await store.articles.count({ statuses: [status] })).toBe(list.length);
        }
      };
      await check({ draft: [draftB.id, draftA.id], scheduled: [soon.id], archived: [] });
      expect(await ids({ statuses: ['draft'] }, 1)).toEqual([draftA.id]);
      expect(await ids({ statuses: ['draft'], section: 'world' })).toEqual([draftA.id]);
      expect(await store.articles.count({ statuses: ['draft'], section: 'business' })).toBe(1);

      // Scheduled, published when due, archived: each list follows.
      await store.articles.replace({ ...draftA, status: 'scheduled', scheduledFor: at('06') });
      await store.articles.publishIfScheduled(soon.id, at('05'));
      await store.articles.replace({ ...live, status: 'archived' });
      await check({ draft: [draftB.id], scheduled: [draftA.id], archived: [live.id] });
      expect((await store.articles.listDue(at('07'))).map((r) => r.id)).toEqual([draftA.id]);
      expect(await store.articles.listDue(at('05'))).toEqual([]);

      await store.close();
      store = await open(dir);
      await check({ draft: [draftB.id], scheduled: [draftA.id], archived: [live.id] });
      expect((await store.articles.listDue(at('07'))).map((r) => r.id)).toEqual([draftA.id]);
    });

    it('keeps each month of published articles with its count and newest change, as articles change', async () => {
      const at = (day: string, time = '08:00') => `2025-${day}T${time}:00.000Z`;
      const jan = articleRecord({ publishedAt: at('01-10'), updatedAt: at('01-10') });
      const janLater = articleRecord({ publishedAt: at('01-20'), updatedAt: at('02-03') });
      const feb = articleRecord({ publishedAt: at('02-01', '00:00'), updatedAt: at('02-01', '00:00') });
      const draft = articleRecord({ status: 'draft', publishedAt: undefined, updatedAt: at('03-01') });
      // Published at 23:30 on 31 March in New York: April in UTC, as the sitemaps file it.
      const offset = articleRecord({ publishedAt: '2025-03-31T23:30:00.000-04:00', updatedAt: at('04-01', '03:30') });
      for (const r of [jan, janLater, feb, draft, offset]) await store.articles.insert(r);
      expect(await store.articles.periods()).toEqual([
        { period: '2025-04', lastmod: at('04-01', '03:30'), count: 1 },
        { period: '2025-02', lastmod: at('02-01', '00:00'), count: 1 },
        { period: '2025-01', lastmod: at('02-03'), count: 2 },
      ]);
      // An edit moves its month's lastmod; unpublishing the newest change falls back to the next one.
      await store.articles.replace({ ...jan, updatedAt: at('05-05') });
      expect((await store.articles.periods()).find((p) => p.period === '2025-01')).toEqual({
        period: '2025-01',
        lastmod: at('05-05'),
        count: 2,
      });
      await store.articles.replace({ ...(await store.articles.get(jan.id))!, status: 'archived', updatedAt: at('05-06') });
      expect((await store.articles.periods()).find((p) => p.period === '2025-01')).toEqual({
        period: '2025-01',
        lastmod: at('02-03'),
        count: 1,
      });
      // A month whose last article goes is gone.
      await store.articles.delete(feb.id);
      expect((await store.articles.periods()).map((p) => p.period)).toEqual(['2025-04', '2025-01']);
    });

    it('bumps the version on every write', async () => {
      const v0 = await store.articles.version();
      const record = articleRecord();
      await store.articles.insert(record);
      await store.articles.replace({ ...record, title: 'x' });
      await store.articles.delete(record.id);
      expect(await store.articles.version()).toBe(v0 + 3);
    });
  });

  describe('counters and votes', () => {
    it('counts one vote per visitor, idempotently, and moves a changed vote', async () => {
      expect(await store.counters.get('a')).toEqual({ likes: 0, dislikes: 0, views: 0 });
      expect(await store.counters.vote('a', 'v1', 'like')).toEqual({ likes: 1, dislikes: 0, views: 0, vote: 'like' });
      expect(await store.counters.vote('a', 'v1', 'like')).toEqual({ likes: 1, dislikes: 0, views: 0, vote: 'like' });
      expect(await store.counters.vote('a', 'v2', 'like')).toMatchObject({ likes: 2 });
      expect(await store.counters.vote('a', 'v1', 'dislike')).toMatchObject({ likes: 1, dislikes: 1, vote: 'dislike' });
      expect(await store.counters.visitorVote('a', 'v1')).toBe('dislike');
      expect(await store.counters.visitorVote('a', 'v3')).toBeUndefined();
      onDisk(() => void expect(readFile<VotesFile>('votes').votes.a).toEqual({ v1: 'dislike', v2: 'like' }));
    });

    it('imports many votes as vote() takes each in order, beside votes already there, and keeps them', async () => {
      await store.counters.vote('a', 'v1', 'like');
      await store.counters.adjust('a', 'like', 2);
      await store.counters.importVotes([
        { articleId: 'a', visitorId: 'v1', kind: 'dislike' },
        { articleId: 'a', visitorId: 'v2', kind: 'like' },
        { articleId: 'a', visitorId: 'v2', kind: 'like' },
        { articleId: 'b', visitorId: 'v2', kind: 'dislike' },
        { articleId: 'b', visitorId: 'v3', kind: 'like' },
        { articleId: 'b', visitorId: 'v3', kind: 'dislike' },
      ]);
      // a: v1 moved to dislike, v2 likes, and the editor's +2 stays on top of the counted votes.
      expect(await store.counters.get('a')).toEqual({ likes: 3, dislikes: 1, views: 0 });
      expect(await store.counters.get('b')).toEqual({ likes: 0, dislikes: 2, views: 0 });
      expect(await store.counters.visitorVote('a', 'v1')).toBe('dislike');
      expect(await store.counters.visitorVote('b', 'v3')).toBe('dislike');
      expect(await store.counters.vote('b', 'v3', 'like')).toMatchObject({ likes: 1, dislikes: 1 });
      await store.close();
      store = await open(dir);
      expect(await store.counters.get('a')).toEqual({ likes: 3, dislikes: 1, views: 0 });
      expect(await store.counters.get('b')).toEqual({ likes: 1, dislikes: 1, views: 0 });
      onDisk(() => void expect(readFile<VotesFile>('votes').votes.b).toEqual({ v2: 'dislike', v3: 'like' }));
    });

    it('adjusts never below zero, counts views, reads many, forgets a deleted article', async () => {
      expect(await store.counters.adjust('a', 'like', 5)).toEqual({ likes: 5, dislikes: 0, views: 0 });
      expect(await store.counters.adjust('a', 'like', -9)).toEqual({ likes: 0, dislikes: 0, views: 0 });
      expect(await store.counters.adjust('a', 'dislike', 3)).toMatchObject({ dislikes: 3 });
      await store.counters.incrementViews('a');
      await store.counters.incrementViews('a');
      const many = await store.counters.getMany(['a', 'b']);
      expect(many.get('a')).toEqual({ likes: 0, dislikes: 3, views: 2 });
      expect(many.get('b')).toEqual({ likes: 0, dislikes: 0, views: 0 });
      await store.counters.vote('a', 'v1', 'like');
      await store.counters.deleteArticle('a');
      expect(await store.counters.get('a')).toEqual({ likes: 0, dislikes: 0, views: 0 });
      expect(await store.counters.visitorVote('a', 'v1')).toBeUndefined();
      onDisk(() => void expect(readFile<CountersFile>('counters').views).toEqual({}));
      onDisk(() => void expect(readFile<VotesFile>('votes').tallies).toEqual({}));
    });
  });

  describe('comments', () => {
    const comment = (n: number, overrides: Partial<Comment> = {}): Comment => ({
      id: `c${n}`,
      articleId: 'a1',
      authorName: `Name ${n}`,
      authorEmail: `n${n}@example.com`,
      content: `Content ${n}`,
      status: 'visible',
      createdAt: new Date(Date.UTC(2025, 0, 1, 0, n)).toISOString(),
      ...overrides,
    });

    it('lists newest first, filters by article, status and search, counts agree', async () => {
      await store.comments.insert(comment(1));
      await store.comments.insert(comment(2, { articleId: 'a2' }));
      await store.comments.insert(comment(3, { status: 'hidden', content: 'Needle here' }));
      const ids = async (filter: object, page = { offset: 0, limit: 10 }) => (await store.comments.list(filter, page)).map((c) => c.id);
      expect(await ids({})).toEqual(['c3', 'c2', 'c1']);
      expect(await ids({ articleId: 'a1' })).toEqual(['c3', 'c1']);
      expect(await ids({ articleId: 'a1', status: 'visible' })).toEqual(['c1']);
      expect(await ids({ search: 'NEEDLE' })).toEqual(['c3']);
      expect(await ids({ search: 'n2@example' })).toEqual(['c2']);
      expect(await ids({}, { offset: 1, limit: 1 })).toEqual(['c2']);
      for (const filter of [{}, { articleId: 'a1' }, { status: 'hidden' as const }, { search: 'name' }]) {
        expect(await store.comments.count(filter)).toBe((await ids(filter, { offset: 0, limit: 100 })).length);
      }
    });

    it('sets status, deletes one and all of an article', async () => {
      for (const n of [1, 2, 3]) await store.comments.insert(comment(n, { articleId: n === 2 ? 'a2' : 'a1' }));
      expect(await store.comments.setStatus('c1', 'hidden')).toMatchObject({ id: 'c1', status: 'hidden' });
      expect(await store.comments.setStatus('missing', 'hidden')).toBeUndefined();
      expect((await store.comments.get('c1'))?.status).toBe('hidden');
      expect(await store.comments.delete('c1')).toBe(true);
      expect(await store.comments.delete('c1')).toBe(false);
      await store.comments.deleteForArticle('a1');
      expect((await store.comments.list({}, { offset: 0, limit: 10 })).map((c) => c.id)).toEqual(['c2']);
      onDisk(() => void expect(readFile<CommentsFile>('comments').comments.map((c: Comment) => c.id)).toEqual(['c2']));
    });
  });

  describe('sources', () => {
    it('inserts, lists, updates (dropping cleared fields) and deletes', async () => {
      const source: NewsSource = {
        id: 's1',
        name: 'Wire',
        type: 'rss',
        url: 'https://w.example/rss',
        section: 'world',
        enabled: true,
        createdAt: '2025-01-01T00:00:00.000Z',
        lastError: 'timeout',
      };
      await store.sources.insert(source);
      expect(await store.sources.list()).toEqual([source]);
      const updated = await store.sources.update('s1', { enabled: false, lastError: undefined, lastFetchedAt: '2025-01-02T00:00:00.000Z' });
      expect(updated).toMatchObject({ enabled: false, lastFetchedAt: '2025-01-02T00:00:00.000Z' });
      expect(updated).not.toHaveProperty('lastError');
      expect(await store.sources.update('missing', { enabled: true })).toBeUndefined();
      expect(await store.sources.delete('s1')).toBe(true);
      expect(await store.sources.delete('s1')).toBe(false);
      expect(await store.sources.list()).toEqual([]);
    });
  });

  describe('subscribers', () => {
    it('upserts idempotently per e-mail, unsubscribes by token, re-activates', async () => {
      const first = await store.subscribers.upsert({
        id: '1',
        email: 'a@example.com',
        token: 'tokenaaaaaaaaaaaaaaa',
        createdAt: '2025-01-01T00:00:00.000Z',
      });
      const again = await store.subscribers.upsert({
        id: '2',
        email: 'a@example.com',
        token: 'tokenbbbbbbbbbbbbbbb',
        createdAt: '2025-01-02T00:00:00.000Z',
      });
      expect(again).toEqual(first);
      expect(await store.subscribers.count()).toBe(1);
      expect((await store.subscribers.getByEmail('a@example.com'))?.token).toBe('tokenaaaaaaaaaaaaaaa');
      expect(await store.subscribers.unsubscribe('unknown', '2025-02-01T00:00:00.000Z')).toBeUndefined();
      expect(await store.subscribers.unsubscribe('tokenaaaaaaaaaaaaaaa', '2025-02-01T00:00:00.000Z')).toMatchObject({
        unsubscribedAt: '2025-02-01T00:00:00.000Z',
      });
      expect(await store.subscribers.unsubscribe('tokenaaaaaaaaaaaaaaa', '2025-03-01T00:00:00.000Z')).toMatchObject({
        unsubscribedAt: '2025-02-01T00:00:00.000Z',
      });
      expect(await store.subscribers.count()).toBe(0);
      expect((await store.subscribers.listFiltered({}, { offset: 0, limit: 0 })).total).toBe(1);
      expect((await store.subscribers.listFiltered({ status: 'unsubscribed' }, { offset: 5, limit: 5 })).total).toBe(1);
      await store.subscribers.upsert({
        id: '3',
        email: 'a@example.com',
        token: 'tokencccccccccccccccc',
        createdAt: '2025-04-01T00:00:00.000Z',
      });
      expect(await store.subscribers.count()).toBe(1);
      expect((await store.subscribers.getByToken('tokenaaaaaaaaaaaaaaa'))?.unsubscribedAt).toBeUndefined();
      onDisk(() => void expect(readFile<SubscribersFile>('subscribers').subscribers).toHaveLength(1));
    });
  });

  describe('users', () => {
    it('upserts by username (case-insensitive) keeping the id', async () => {
      await store.users.upsert({ id: 'u1', username: 'Editor', passwordHash: 'h1', createdAt: '2025-01-01T00:00:00.000Z' });
      const replaced = await store.users.upsert({
        id: 'u2',
        username: 'editor',
        passwordHash: 'h2',
        createdAt: '2025-01-02T00:00:00.000Z',
      });
      expect(replaced).toMatchObject({ id: 'u1', passwordHash: 'h2' });
      expect(await store.users.count()).toBe(1);
      expect((await store.users.getByUsername('EDITOR'))?.id).toBe('u1');
      expect((await store.users.get('u1'))?.passwordHash).toBe('h2');
      expect(await store.users.get('u2')).toBeUndefined();
    });
  });

  describe('sessions', () => {
    const session = (id: string, userId: string, expiresAt: string) => ({ id, userId, expiresAt, createdAt: '2025-01-01T00:00:00.000Z' });

    it('inserts, extends, deletes, and removes expired or a user’s sessions', async () => {
      await store.sessions.insert(session('s1', 'u1', '2025-01-10T00:00:00.000Z'));
      await store.sessions.insert(session('s2', 'u1', '2025-03-01T00:00:00.000Z'));
      await store.sessions.insert(session('s3', 'u2', '2025-03-01T00:00:00.000Z'));
      await store.sessions.setExpiry('s1', '2025-02-01T00:00:00.000Z');
      expect((await store.sessions.get('s1'))?.expiresAt).toBe('2025-02-01T00:00:00.000Z');
      expect(await store.sessions.deleteExpired('2025-02-15T00:00:00.000Z')).toBe(1);
      expect(await store.sessions.get('s1')).toBeUndefined();
      await store.sessions.deleteForUser('u1');
      expect(await store.sessions.get('s2')).toBeUndefined();
      expect(await store.sessions.get('s3')).toBeDefined();
      await store.sessions.delete('s3');
      onDisk(() => void expect(readFile<SessionsFile>('sessions').sessions).toEqual({}));
    });
  });

  describe('jobs', () => {
    it('coalesces paths already queued and lists oldest first', async () => {
      expect(await store.jobs.enqueue(['/a', '/b', '/a'], '2025-01-01T00:00:00.000Z')).toBe(2);
      expect(await store.jobs.enqueue(['/b', '/c'], '2025-01-01T00:00:01.000Z')).toBe(1);
      expect((await store.jobs.list(10)).map((j) => j.path)).toEqual(['/a', '/b', '/c']);
      expect((await store.jobs.list(10))[1]!.queuedAt).toBe('2025-01-01T00:00:01.000Z');
      expect(await store.jobs.size()).toBe(3);
      expect(await store.jobs.list(1)).toHaveLength(1);
    });

    it('completes a job, but keeps one re-queued while it was rendering', async () => {
      await store.jobs.enqueue(['/a', '/b'], '2025-01-01T00:00:00.000Z');
      const [a, b] = await store.jobs.list(10);
      const startedAt = '2025-01-01T00:00:05.000Z';
      await store.jobs.enqueue(['/b'], '2025-01-01T00:00:06.000Z');
      await store.jobs.complete(a!.id, startedAt);
      await store.jobs.complete(b!.id, startedAt);
      expect((await store.jobs.list(10)).map((j) => j.path)).toEqual(['/b']);
      await store.jobs.complete(b!.id, '2025-01-01T00:00:07.000Z');
      expect(await store.jobs.size()).toBe(0);
    });

    it('moves a failed job to the back with its error', async () => {
      await store.jobs.enqueue(['/a', '/b'], '2025-01-01T00:00:00.000Z');
      const [a] = await store.jobs.list(1);
      await store.jobs.fail(a!.id, 'boom');
      const jobs = await store.jobs.list(10);
      expect(jobs.map((j) => j.path)).toEqual(['/b', '/a']);
      expect(jobs[1]).toMatchObject({ attempts: 1, lastError: 'boom' });
    });

    it('finds a job by id and lists the failed ones in queue order (the dashboard reads both)', async () => {
      await store.jobs.enqueue(['/a', '/b', '/c'], '2025-01-01T00:00:00.000Z');
      const [a, b, c] = await store.jobs.list(10);
      expect(await store.jobs.failed(10)).toEqual([]);
      await store.jobs.fail(c!.id, 'ENOTDIR: not a directory');
      await store.jobs.fail(a!.id, 'boom');
      await store.jobs.fail(a!.id, 'boom again');
      expect(await store.jobs.failed(10)).toEqual([
        expect.objectContaining({ id: c!.id, path: '/c', attempts: 1, lastError: 'ENOTDIR: not a directory' }),
        expect.objectContaining({ id: a!.id, path: '/a', attempts: 2, lastError: 'boom again' }),
      ]);
      expect((await store.jobs.failed(1)).map((j) => j.path)).toEqual(['/c']);
      expect(await store.jobs.get(b!.id)).toMatchObject({ id: b!.id, path: '/b', attempts: 0 });
      expect(await store.jobs.get(a!.id)).toMatchObject({ path: '/a', attempts: 2, lastError: 'boom again' });
      // Done: gone from both answers; ids the store never made are simply unknown.
      await store.jobs.complete(c!.id, '2025-01-01T00:00:05.000Z');
      expect(await store.jobs.get(c!.id)).toBeUndefined();
      expect((await store.jobs.failed(10)).map((j) => j.path)).toEqual(['/a']);
      expect(await store.jobs.get('999999')).toBeUndefined();
      expect(await store.jobs.get('local-1')).toBeUndefined();
    });

    it('claims a queued job for its owner (and not a job that is gone)', async () => {
      await store.jobs.enqueue(['/a'], '2025-01-01T00:00:00.000Z');
      const [a] = await store.jobs.list(1);
      expect(await store.jobs.claim(a!.id, 'me', 10_000, 1000)).toBe(true);
      expect(await store.jobs.claim(a!.id, 'me', 20_000, 2000)).toBe(true);
      await store.jobs.complete(a!.id, '2025-01-01T00:00:05.000Z');
      expect(await store.jobs.claim(a!.id, 'me', 20_000, 3000)).toBe(false);
    });
  });

  describe('rendered pages', () => {
    it('tells its listeners of every page put, with its sequence and origin', async () => {
      const heard: { path: string; seq: number; origin: string }[] = [];
      const stop = await store.pages.listen((note) => heard.push(note));
      const first = await store.pages.put('/article/a', new TextEncoder().encode('<p>a</p>'), 'server-1');
      const second = await store.pages.put('/article/a', undefined, 'server-2');
      expect(second).toBeGreaterThan(first);
      for (let i = 0; i < 200 && heard.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      await stop();
      expect(heard).toEqual([
        { path: '/article/a', seq: first, origin: 'server-1' },
        { path: '/article/a', seq: second, origin: 'server-2' },
      ]);
      // A listener still on hears the next note: by then the stopped one would have been told too.
      const later: string[] = [];
      const stopLater = await store.pages.listen((note) => later.push(note.path));
      await store.pages.put('/article/b', undefined, 'server-1');
      for (let i = 0; i < 200 && later.length < 1; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      await stopLater();
      expect(later).toEqual(['/article/b']);
      expect(heard).toHaveLength(2);
    });

    it('keeps the bytes for other servers only when the store is shared', async () => {
      const body = new TextEncoder().encode('<h1>Page</h1>');
      const seq = await store.pages.put('/section/world', body, 'server-1');
      await store.pages.put('/article/gone', undefined, 'server-1');
      expect(store.pages.shared).toBe(kind === 'pg');
      if (kind === 'lowdb') {
        expect(await store.pages.get('/section/world')).toBeUndefined();
        expect(await store.pages.list()).toEqual([]);
        return;
      }
      expect(await store.pages.get('/section/world')).toEqual({ path: '/section/world', body, seq, origin: 'server-1' });
      expect(await store.pages.get('/article/gone')).toMatchObject({ body: undefined });
      const listed = await store.pages.list();
      expect(listed.map((p) => p.path)).toEqual(['/section/world', '/article/gone']);
      expect(listed[0]!.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(listed[1]!.sha256).toBeUndefined();
    });
  });

  describe('limits and meta', () => {
    it('counts hits in fixed windows and keeps values until they expire', async () => {
      expect(await store.limits.hit('k', 1000, 0)).toEqual({ count: 1, resetAt: 1000 });
      expect(await store.limits.hit('k', 1000, 500)).toEqual({ count: 2, resetAt: 1000 });
      expect(await store.limits.hit('k', 1000, 1000)).toEqual({ count: 1, resetAt: 2000 });
      await store.limits.set('v', { n: 1 }, 100);
      expect(await store.limits.get('v', 99)).toEqual({ n: 1 });
      expect(await store.limits.get('v', 100)).toBeUndefined();
      await store.limits.delete('k');
      expect(await store.limits.get('k', 0)).toBeUndefined();
      // update: read-change-write as one step, from nothing (or an expired value) and from the current value.
      const bump = (n = 0) => ({ value: n + 1, expiresAt: 5000 });
      expect(await Promise.all(Array.from({ length: 5 }, () => store.limits.update<number>('u', 0, bump)))).toEqual(
        expect.arrayContaining([1, 2, 3, 4, 5]),
      );
      expect(await store.limits.get('u', 4999)).toBe(5);
      expect(await store.limits.update<number>('u', 5000, bump)).toBe(1);
    });

    it('keeps meta values and a stable store id', async () => {
      await store.meta.set('manifest', { version: 3 });
      expect(await store.meta.get('manifest')).toEqual({ version: 3 });
      // Racing callers agree on one value (on PostgreSQL either insert may commit first).
      const [a, b] = await Promise.all([store.meta.setIfAbsent('secret', 'first'), store.meta.setIfAbsent('secret', 'second')]);
      expect(a).toBe(b);
      expect(['first', 'second']).toContain(a);
      expect(await store.meta.get('secret')).toBe(a);
      expect(await store.meta.setIfAbsent('manifest', { version: 4 })).toEqual({ version: 3 });
      expect(store.id).toMatch(/^[0-9a-f-]{36}$/);
      const id = store.id;
      await store.close();
      store = await open(dir);
      expect(store.id).toBe(id);
    });
  });

  describe('subscriber list, users, audit, briefings, revisions and trash', () => {
    it('lists subscribers newest first by e-mail and derived status, counts by status, and answers the confirmed oldest first', async () => {
      const at = (d: number) => `2025-01-0${d}T00:00:00.000Z`;
      await store.subscribers.upsert({ id: 's1', email: 'ann@x.io', token: 'tokenaaaaaaaaaaaaaaa', createdAt: at(1) });
      await store.subscribers.upsert({
        id: 's2',
        email: 'bob@x.io',
        token: 'tokenbbbbbbbbbbbbbbb',
        createdAt: at(2),
        confirmTokenHash: 'a'.repeat(64),
        confirmExpiresAt: at(9),
      });
      await store.subscribers.upsert({ id: 's3', email: 'cat@y.io', token: 'tokencccccccccccccccc', createdAt: at(3) });
      await store.subscribers.unsubscribe('tokencccccccccccccccc', at(4));
      const ids = (r: { items: { id: string }[] }) => r.items.map((x) => x.id);
      expect(ids(await store.subscribers.listFiltered({}, { offset: 0, limit: 10 }))).toEqual(['s3', 's2', 's1']);
      expect(await store.subscribers.listFiltered({ q: 'X.IO' }, { offset: 1, limit: 1 })).toMatchObject({
        total: 2,
        items: [{ id: 's1' }],
      });
      expect(ids(await store.subscribers.listFiltered({ status: 'pending' }, { offset: 0, limit: 10 }))).toEqual(['s2']);
      expect(await store.subscribers.countByStatus()).toEqual({ confirmed: 1, pending: 1, unsubscribed: 1 });
      expect((await store.subscribers.getByConfirmTokenHash('a'.repeat(64)))?.id).toBe('s2');
      expect(await store.subscribers.getByConfirmTokenHash('b'.repeat(64))).toBeUndefined();
      // Confirming: set confirmedAt, remove the confirmation fields (undefined removes).
      const confirmed = await store.subscribers.update('s2', {
        confirmedAt: at(5),
        confirmTokenHash: undefined,
        confirmExpiresAt: undefined,
      });
      expect(confirmed).not.toHaveProperty('confirmTokenHash');
      expect(await store.subscribers.getByConfirmTokenHash('a'.repeat(64))).toBeUndefined();
      expect((await store.subscribers.listConfirmed()).map((x) => x.id)).toEqual(['s1', 's2']);
      expect(await store.subscribers.update('missing', { confirmedAt: at(5) })).toBeUndefined();
      expect(await store.subscribers.delete('s1')).toBe(true);
      expect(await store.subscribers.delete('s1')).toBe(false);
      expect(await store.subscribers.get('s1')).toBeUndefined();
      expect((await store.subscribers.get('s2'))?.email).toBe('bob@x.io');
    });

    it('lists users oldest first, updates (removing cleared fields) and deletes by id', async () => {
      await store.users.upsert({
        id: 'u1',
        username: 'Ann',
        passwordHash: 'h',
        createdAt: '2025-01-01T00:00:00.000Z',
        role: 'editor',
        disabled: true,
      });
      await store.users.upsert({ id: 'u2', username: 'bob', passwordHash: 'h', createdAt: '2025-01-02T00:00:00.000Z' });
      expect((await store.users.list()).map((u) => u.id)).toEqual(['u1', 'u2']);
      const updated = await store.users.update('u1', { role: 'admin', disabled: undefined });
      expect(updated).toMatchObject({ id: 'u1', username: 'Ann', role: 'admin' });
      expect(updated).not.toHaveProperty('disabled');
      expect(await store.users.update('missing', { role: 'admin' })).toBeUndefined();
      expect(await store.users.delete('u2')).toBe(true);
      expect(await store.users.delete('u2')).toBe(false);
      expect(await store.users.count()).toBe(1);
    });

    it('appends audit entries and pages them newest first with the total', async () => {
      for (let i = 0; i < 5; i++) {
        await store.audit.append({
          id: `e${i}`,
          at: `2025-0${1 + (i % 2)}-0${i + 1}T00:00:00.000Z`,
          actor: null,
          action: 'article.publish',
          target: { type: 'article', id: `a${i}` },
        });
      }
      const first = await store.audit.list({ offset: 0, limit: 2 });
      expect(first.total).toBe(5);
      const all = (await store.audit.list({ offset: 0, limit: 10 })).items.map((e) => e.id);
      expect(first.items.map((e) => e.id)).toEqual(all.slice(0, 2));
      expect((await store.audit.list({ offset: 4, limit: 2 })).items.map((e) => e.id)).toEqual(all.slice(4));
      expect(new Set(all)).toEqual(new Set(['e0', 'e1', 'e2', 'e3', 'e4']));
    });

    it('keeps briefing runs in start order per day, and the latest state per recipient', async () => {
      const run = (id: string, date: string, startedAt: string) => ({
        id,
        date,
        forced: false,
        trigger: 'schedule' as const,
        status: 'sending' as const,
        startedAt,
        since: startedAt,
        subject: 'B',
        articleIds: [],
        recipients: 2,
        sent: 0,
        failed: 0,
        unknown: 0,
      });
      await store.briefings.saveRun(run('2025-01-06-1', '2025-01-06', '2025-01-06T07:00:00.000Z'));
      await store.briefings.saveRun(run('2025-01-07-1', '2025-01-07', '2025-01-07T07:00:00.000Z'));
      await store.briefings.saveRun(run('2025-01-07-2', '2025-01-07', '2025-01-07T09:00:00.000Z'));
      await store.briefings.saveRun({ ...run('2025-01-07-1', '2025-01-07', '2025-01-07T07:00:00.000Z'), status: 'sent' });
      expect((await store.briefings.runsFor('2025-01-07')).map((r) => [r.id, r.status])).toEqual([
        ['2025-01-07-1', 'sent'],
        ['2025-01-07-2', 'sending'],
      ]);
      expect((await store.briefings.latest())?.id).toBe('2025-01-07-2');
      await store.briefings.recordDeliveries('2025-01-07-2', [{ subscriberId: 'a', state: 'attempting', at: 't1' }]);
      await store.briefings.recordDeliveries('2025-01-07-2', [
        { subscriberId: 'a', state: 'sent', at: 't2' },
        { subscriberId: 'b', state: 'attempting', at: 't3' },
      ]);
      const deliveries = await store.briefings.deliveries('2025-01-07-2');
      expect([...deliveries.values()].map((d) => [d.subscriberId, d.state]).sort()).toEqual([
        ['a', 'sent'],
        ['b', 'attempting'],
      ]);
      expect((await store.briefings.deliveries('2025-01-06-1')).size).toBe(0);
      await expect(store.briefings.deliveries('../escape')).rejects.toThrow(/Invalid briefing run id/);
    });

    it('starts a run once, and lets one caller claim each recipient (again only after a failure marked for retry)', async () => {
      const run = {
        id: '2025-01-08-1',
        date: '2025-01-08',
        forced: false,
        trigger: 'schedule' as const,
        status: 'sending' as const,
        startedAt: 't',
        since: 't',
        subject: 'B',
        articleIds: [],
        recipients: 3,
        sent: 0,
        failed: 0,
        unknown: 0,
      };
      // Concurrent callers race: which one wins is up to the store (and, on PostgreSQL, the scheduler), but exactly one does.
      const started = await Promise.all([store.briefings.startRun(run), store.briefings.startRun({ ...run, subject: 'Other' })]);
      expect(started.filter(Boolean)).toHaveLength(1);
      expect((await store.briefings.runsFor('2025-01-08')).map((r) => r.subject)).toEqual([started[0] ? 'B' : 'Other']);
      const claims = await Promise.all([
        store.briefings.claimDelivery(run.id, 'a', 't1'),
        store.briefings.claimDelivery(run.id, 'a', 't2'),
        store.briefings.claimDelivery(run.id, 'b', 't3'),
      ]);
      expect(claims.slice(0, 2).filter(Boolean)).toHaveLength(1);
      expect(claims[2]).toBe(true);
      expect((await store.briefings.deliveries(run.id)).get('a')).toMatchObject({ state: 'attempting', at: claims[0] ? 't1' : 't2' });
      await store.briefings.recordDeliveries(run.id, [
        { subscriberId: 'a', state: 'sent', at: 't4' },
        { subscriberId: 'b', state: 'failed', at: 't4', error: 'busy', retry: true },
      ]);
      expect(await store.briefings.claimDelivery(run.id, 'a', 't5')).toBe(false);
      expect(await store.briefings.claimDelivery(run.id, 'b', 't5')).toBe(true);
      expect(await store.briefings.claimDelivery(run.id, 'b', 't6')).toBe(false);
    });

    it('keeps revisions newest first (a coalesced save rewrites its rev), and a trash that reserves slugs', async () => {
      const a = articleRecord({ slug: 'binned' });
      const revision = (rev: number, version: number) => ({
        articleId: a.id,
        rev,
        version,
        at: `2025-01-0${version}T00:00:00.000Z`,
        by: 'u1',
        fields: ['title'],
        autosave: rev > 1,
        article: a,
      });
      await store.revisions.save(revision(1, 1));
      await store.revisions.save(revision(2, 2));
      await store.revisions.save(revision(2, 3));
      expect((await store.revisions.list(a.id)).map((r) => [r.rev, r.version])).toEqual([
        [2, 3],
        [1, 1],
      ]);
      expect((await store.revisions.latest(a.id))?.version).toBe(3);
      expect((await store.revisions.get(a.id, 1))?.version).toBe(1);
      expect(await store.revisions.get(a.id, 9)).toBeUndefined();
      await store.trash.put({ article: a, deletedAt: '2025-02-01T00:00:00.000Z', deletedBy: 'u1' });
      await store.trash.put({ article: articleRecord(), deletedAt: '2025-03-01T00:00:00.000Z', deletedBy: 'u1' });
      expect((await store.trash.list()).map((t) => t.deletedAt)).toEqual(['2025-03-01T00:00:00.000Z', '2025-02-01T00:00:00.000Z']);
      expect(await store.trash.slugExists('binned')).toBe(true);
      expect((await store.trash.get(a.id))?.deletedBy).toBe('u1');
      expect(await store.trash.delete(a.id)).toBe(true);
      expect(await store.trash.delete(a.id)).toBe(false);
      expect(await store.trash.slugExists('binned')).toBe(false);
      await store.revisions.deleteForArticle(a.id);
      expect(await store.revisions.list(a.id)).toEqual([]);
    });
  });

  describe('hostile keys and text', () => {
    it('answers "not found" for ids, slugs, tokens and e-mails with a NUL byte, and stores text that holds one', async () => {
      const nul = 'x\u0000y';
      expect(await store.articles.get(nul)).toBeUndefined();
      expect(await store.articles.getBySlug(nul)).toBeUndefined();
      expect(await store.articles.slugExists(nul)).toBe(false);
      expect(await store.comments.get(nul)).toBeUndefined();
      expect(await store.sessions.get(nul)).toBeUndefined();
      expect(await store.subscribers.getByToken(nul)).toBeUndefined();
      expect(await store.subscribers.getByEmail(nul)).toBeUndefined();
      expect(await store.users.getByUsername(nul)).toBeUndefined();
      expect(await store.articles.search(nul, {}, { offset: 0, limit: 5 })).toEqual({ items: [], total: 0 });
      await store.comments.insert({
        id: 'c-nul',
        articleId: 'a',
        authorName: 'N',
        authorEmail: 'n@x.io',
        content: `before${nul}after`,
        status: 'visible',
        createdAt: '2025-01-01T00:00:00.000Z',
      });
      // lowdb keeps the byte; PostgreSQL text cannot hold it and keeps U+FFFD in its place.
      expect(['beforex\u0000yafter', 'beforex\uFFFDyafter']).toContain((await store.comments.get('c-nul'))?.content);
    });
  });

  describe('reopening', () => {
    it('reopening keeps every collection', async () => {
      const record = articleRecord({ slug: 'kept', title: 'Persistent story' });
      await store.articles.insert(record);
      await store.counters.vote(record.id, 'v1', 'like');
      await store.comments.insert({
        id: 'c1',
        articleId: record.id,
        authorName: 'A',
        authorEmail: 'a@x.io',
        content: 'Hi',
        status: 'visible',
        createdAt: '2025-01-01T00:00:00.000Z',
      });
      await store.sources.insert({
        id: 's1',
        name: 'S',
        type: 'rss',
        url: 'https://s.example',
        section: 'world',
        enabled: true,
        createdAt: '2025-01-01T00:00:00.000Z',
      });
      await store.subscribers.upsert({ id: 'n1', email: 'n@x.io', token: 'tokendddddddddddddddd', createdAt: '2025-01-01T00:00:00.000Z' });
      await store.users.upsert({ id: 'u1', username: 'u', passwordHash: 'h', createdAt: '2025-01-01T00:00:00.000Z' });
      await store.sessions.insert({
        id: 'sess',
        userId: 'u1',
        expiresAt: '2099-01-01T00:00:00.000Z',
        createdAt: '2025-01-01T00:00:00.000Z',
      });
      await store.jobs.enqueue(['/article/kept'], '2025-01-01T00:00:00.000Z');
      const version = await store.articles.version();
      await store.close();

      store = await open(dir);
      expect((await store.articles.getBySlug('kept'))?.title).toBe('Persistent story');
      expect((await store.articles.search('persistent', {}, { offset: 0, limit: 5 })).total).toBe(1);
      expect(await store.articles.version()).toBe(version);
      expect(await store.counters.get(record.id)).toMatchObject({ likes: 1 });
      expect(await store.counters.visitorVote(record.id, 'v1')).toBe('like');
      expect(await store.comments.count({ articleId: record.id })).toBe(1);
      expect(await store.sources.list()).toHaveLength(1);
      expect(await store.subscribers.count()).toBe(1);
      expect(await store.users.get('u1')).toBeDefined();
      expect(await store.sessions.get('sess')).toBeDefined();
      expect(await store.jobs.size()).toBe(1);
    });

    it('opens read-only without the lock and refuses writes', async () => {
      await store.articles.insert(articleRecord({ slug: 'snap' }));
      const reader = await open(dir, 'read');
      expect(await reader.articles.getBySlug('snap')).toBeDefined();
      await expect(reader.articles.insert(articleRecord())).rejects.toThrow(/read-only/);
      await reader.close();
      expect(fs.existsSync(path.join(dir, '.lock'))).toBe(true);
    });
  });
});

describe('lowdb files', () => {
  beforeEach(async () => {
    kind = 'lowdb';
    dir = makeTempDir();
    store = await open(dir);
  });

  it('imports more votes than its buckets hold into an empty store with the split they need, and reads them back', async () => {
    const votes = Array.from({ length: 140_000 }, (_, i) => ({
      articleId: `a${i % 50}`,
      visitorId: `v${i}`,
      kind: i % 3 === 0 ? ('dislike' as const) : ('like' as const),
    }));
    await store.counters.importVotes(votes);
    // 140,000 votes at 128 a bucket: more than layout 2's 1,024 buckets, set before the votes went in.
    const split = JSON.parse(fs.readFileSync(voteSplitFile(dir), 'utf8')) as { level: number; next: number };
    expect(2 ** split.level + split.next).toBeGreaterThan(1024);
    const expected = (n: number) => ({ likes: votes.filter((v, i) => i % 50 === n && v.kind === 'like').length, views: 0 });
    expect(await store.counters.get('a7')).toMatchObject(expected(7));
    await store.close();
    store = await open(dir);
    expect(await store.counters.get('a7')).toMatchObject(expected(7));
    expect(await store.counters.get('a0')).toEqual({
      ...expected(0),
      dislikes: votes.filter((v, i) => i % 50 === 0 && v.kind === 'dislike').length,
    });
    expect(await store.counters.visitorVote('a49', 'v139999')).toBe('like');
    const before = await store.counters.get('a49');
    expect(await store.counters.vote('a49', 'v139999', 'dislike')).toMatchObject({
      likes: before.likes - 1,
      dislikes: before.dislikes + 1,
    });
  });

  it('keeps counters out of the articles file', async () => {
    await store.articles.insert(articleRecord({ id: 'x' }));
    const file = articleFile(dir, 'x');
    const before = fs.statSync(file).mtimeMs;
    const text = fs.readFileSync(file, 'utf8');
    await store.counters.vote('x', 'v', 'like');
    await store.counters.incrementViews('x');
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
    expect(fs.statSync(file).mtimeMs).toBe(before);
  });

  it('stays valid JSON through many concurrent writes, read while they happen', async () => {
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < 200; i++) {
      writes.push(
        store.comments.insert({
          id: `c${i}`,
          articleId: 'a',
          authorName: 'N',
          authorEmail: 'n@x.io',
          content: 'x'.repeat(500),
          status: 'visible',
          createdAt: new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString(),
        }),
      );
      writes.push(store.counters.vote('a', `v${i}`, i % 2 ? 'like' : 'dislike'));
      writes.push(store.articles.insert(articleRecord()));
    }
    let reads = 0;
    let done = false;
    const all = Promise.all(writes).finally(() => {
      done = true;
    });
    while (!done) {
      for (const file of storeJsonFiles(dir)) {
        let text: string;
        try {
          text = fs.readFileSync(file, 'utf8');
        } catch {
          continue; // Listed, then deleted: a file that is gone is never half-written.
        }
        expect(() => JSON.parse(text), file).not.toThrow();
        reads++;
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    await all;
    expect(reads).toBeGreaterThan(0);
    expect(readFile<CommentsFile>('comments').comments).toHaveLength(200);
    expect(readFile<VotesFile>('votes').tallies.a).toEqual({ likes: 100, dislikes: 100 });
    expect(readFile<ArticlesFile>('articles').articles).toHaveLength(200);
    expect(fs.readdirSync(dir, { recursive: true }).filter((f) => String(f).endsWith('.tmp'))).toEqual([]);
  });

  it('refuses to open a collection that is not valid JSON, naming the file', async () => {
    await store.close();
    const bucket = bucketFile(dir, 'comments', 7);
    fs.mkdirSync(path.dirname(bucket), { recursive: true });
    fs.writeFileSync(bucket, '{"c1": {');
    await expect(open(dir)).rejects.toThrow(/comments\/007\.json.*not valid JSON/);
    // The failed open released its lock.
    expect(fs.existsSync(path.join(dir, '.lock'))).toBe(false);
    fs.writeFileSync(bucket, '{}');
    store = await open(dir);
  });
});
