/** db:import and db:export on real stores: a lowdb folder into PostgreSQL and back, every collection intact, counts checked. */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ViewCount } from '../../src/schemas/analytics.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.ts';
import { readCollectionDocument } from '../../src/store/lowdb/inspect.ts';
import { articleRecord, closeQuietly, makeTempDir } from './support.ts';
import { databaseFor } from '../helpers/postgres.ts';
import { ROOT } from '../helpers/server.ts';

const opened: Store[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await closeQuietly(store);
});

function db(args: string[], env: Record<string, string>) {
  const result = spawnSync(process.execPath, [path.join(ROOT, 'scripts/db.ts'), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  return { code: result.status, out: `${result.stdout}${result.stderr}` };
}

/** Page views over time (issue 33): a bucket of each grain and dimension. */
const VIEW_BUCKETS: ViewCount[] = [
  { grain: 'minute', start: '2026-01-01T10:07Z', dim: 'section', key: 'world', views: 2 },
  { grain: 'hour', start: '2026-01-01T09:30Z', dim: 'article', key: 'a1', views: 5 },
  { grain: 'day', start: '2026-01-01', dim: 'referrer', key: 'world\tsearch\tgoogle.com', views: 7 },
  { grain: 'day', start: '2026-01-01', dim: 'device', key: 'world\tmobile', views: 11 },
];

/** A lowdb store with something in every collection, including the awkward cases (a changed vote, an adjustment below the votes). */
async function fillLowdb(dir: string): Promise<void> {
  const store = await openStore(dir, 'write', { databaseUrl: undefined });
  try {
    const a = articleRecord({ slug: 'kept', title: 'Volcano story', tags: ['volcano'] });
    const b = articleRecord({ status: 'scheduled', publishedAt: undefined, scheduledFor: '2099-01-01T00:00:00.000Z' });
    const gone = articleRecord({ slug: 'binned' });
    for (const r of [a, b, gone]) await store.articles.insert(r);
    await store.articles.replace({ ...a, title: 'Volcano story, updated' });
    await store.counters.vote(a.id, 'v1', 'like');
    await store.counters.vote(a.id, 'v2', 'like');
    await store.counters.vote(a.id, 'v1', 'dislike');
    await store.counters.vote(b.id, 'v1', 'like');
    await store.counters.adjust(b.id, 'like', -5);
    await store.counters.adjust(a.id, 'like', 10);
    for (let i = 0; i < 3; i++) await store.counters.incrementViews(a.id);
    await store.analytics.addViews(VIEW_BUCKETS);
    // A live article's coverage and an update (issue 35).
    await store.live.putCoverage({
      articleId: a.id,
      startedAt: '2025-01-02T00:00:00.000Z',
      keyPoints: ['One'],
      updatedAt: '2025-01-02T00:00:00.000Z',
    });
    await store.live.putUpdate({
      id: 'lu1',
      articleId: a.id,
      bodyHtml: '<p>Live.</p>',
      isBreaking: true,
      createdAt: '2025-01-02T00:01:00.000Z',
      updatedAt: '2025-01-02T00:01:00.000Z',
      by: 'admin',
    });
    // A paying member with a history line (issue 48).
    await store.members.insert({
      id: 'mem1',
      email: 'reader@example.com',
      name: 'Reader',
      newsletter: true,
      createdAt: '2025-01-03T00:00:00.000Z',
      stripeCustomerId: 'cus_1',
      subscription: {
        id: 'sub_1',
        status: 'active',
        interval: 'year',
        amount: 5000,
        currency: 'eur',
        startedAt: '2025-01-03T00:00:00.000Z',
        currentPeriodEnd: '2026-01-03T00:00:00.000Z',
        cancelAtPeriodEnd: false,
        syncedAt: '2025-01-03T00:00:00.000Z',
      },
      history: [{ at: '2025-01-03T00:00:00.000Z', kind: 'subscription-started', text: 'Subscribed yearly', stripeEventId: 'evt_1' }],
    });
    await store.comments.insert({
      id: 'c1',
      articleId: a.id,
      authorName: 'A',
      authorEmail: 'a@x.io',
      content: 'First',
      status: 'visible',
      createdAt: '2025-01-01T00:00:00.000Z',
    });
    await store.comments.insert({
      id: 'c2',
      articleId: a.id,
      authorName: 'B',
      authorEmail: 'b@x.io',
      content: 'Second',
      status: 'hidden',
      createdAt: '2025-01-02T00:00:00.000Z',
    });
    await store.sources.insert({
      id: 's1',
      name: 'Wire',
      type: 'rss',
      url: 'https://w.example/rss',
      section: 'world',
      enabled: true,
      createdAt: '2025-01-01T00:00:00.000Z',
    });
    await store.subscribers.upsert({ id: 'n1', email: 'one@x.io', token: 'tokenaaaaaaaaaaaaaaa', createdAt: '2025-01-01T00:00:00.000Z' });
    await store.subscribers.upsert({
      id: 'n2',
      email: 'two@x.io',
      token: 'tokenbbbbbbbbbbbbbbb',
      createdAt: '2025-01-02T00:00:00.000Z',
      confirmTokenHash: 'f'.repeat(64),
    });
    await store.subscribers.unsubscribe('tokenaaaaaaaaaaaaaaa', '2025-02-01T00:00:00.000Z');
    await store.users.upsert({ id: 'u1', username: 'Editor', passwordHash: 'h', createdAt: '2025-01-01T00:00:00.000Z', role: 'editor' });
    await store.sessions.insert({ id: 'sess', userId: 'u1', expiresAt: '2099-01-01T00:00:00.000Z', createdAt: '2025-01-01T00:00:00.000Z' });
    await store.jobs.enqueue(['/a', '/b'], '2025-01-01T00:00:00.000Z');
    await store.jobs.fail((await store.jobs.list(1))[0]!.id, 'boom');
    await store.meta.set('manifest', { version: 3 });
    await store.revisions.save({
      articleId: a.id,
      rev: 1,
      version: 1,
      at: '2025-01-01T00:00:00.000Z',
      by: 'u1',
      fields: ['title'],
      autosave: false,
      article: a,
    });
    await store.revisions.save({
      articleId: a.id,
      rev: 2,
      version: 2,
      at: '2025-01-02T00:00:00.000Z',
      by: 'u1',
      fields: ['title'],
      autosave: false,
      article: { ...a, version: 2 },
    });
    await store.trash.put({ article: gone, deletedAt: '2025-03-01T00:00:00.000Z', deletedBy: 'u1' });
    await store.articles.delete(gone.id);
    await store.audit.append({
      id: 'e1',
      at: '2025-01-01T00:00:00.000Z',
      actor: { id: 'u1', username: 'Editor' },
      action: 'article.publish',
      target: { type: 'article', id: a.id },
    });
    await store.audit.append({
      id: 'e2',
      at: '2025-02-01T00:00:00.000Z',
      actor: null,
      action: 'article.delete',
      target: { type: 'article', id: gone.id, label: 'binned' },
    });
    const run = {
      id: '2025-01-06-1',
      date: '2025-01-06',
      forced: false,
      trigger: 'schedule' as const,
      status: 'sent' as const,
      startedAt: '2025-01-06T07:00:00.000Z',
      since: '2025-01-05T07:00:00.000Z',
      subject: 'Briefing',
      articleIds: [a.id],
      recipients: 1,
      sent: 1,
    };
    await store.briefings.saveRun(run as never);
    await store.briefings.recordDeliveries(run.id, [{ subscriberId: 'n2', state: 'attempting', at: '2025-01-06T07:00:01.000Z' }]);
    await store.briefings.recordDeliveries(run.id, [{ subscriberId: 'n2', state: 'sent', at: '2025-01-06T07:00:02.000Z' }]);
  } finally {
    await store.close();
  }
}

const COLLECTIONS = [
  'articles',
  'votes',
  'counters',
  'comments',
  'subscribers',
  'sessions',
  'jobs',
  'sources',
  'users',
  'meta',
  'briefings',
];

/** What the store holds, compared on both sides: the collection documents and the small-file histories. */
async function snapshot(dir: string) {
  const docs: Record<string, unknown> = {};
  for (const name of COLLECTIONS) docs[name] = readCollectionDocument(dir, name);
  const articles = docs.articles as { articles: { id: string }[] };
  articles.articles.sort((x, y) => (x.id < y.id ? -1 : 1));
  const jobs = docs.jobs as { jobs: { id: string }[] };
  const store = await openStore(dir, 'read', { databaseUrl: undefined });
  opened.push(store);
  const ids = [...articles.articles.map((r) => r.id), ...(await store.trash.list()).map((t) => t.article.id)];
  return {
    docs: { ...docs, jobs: { paths: jobs.jobs.map((j) => ({ ...j, id: undefined })) } },
    revisions: await Promise.all(ids.map((id) => store.revisions.list(id))),
    live: { coverage: await store.live.listCoverage(), updates: await Promise.all(ids.map((id) => store.live.listUpdates(id))) },
    trash: await store.trash.list(),
    members: await store.members.all(),
    audit: await store.audit.list({ offset: 0, limit: 100 }),
    deliveries: [...(await store.briefings.deliveries('2025-01-06-1'))],
    search: (await store.articles.search('volcano', {}, { offset: 0, limit: 10 })).total,
  };
}

function sortCounts(counts: ViewCount[]): string[] {
  return counts.map((c) => JSON.stringify([c.grain, c.start, c.dim, c.key, c.views])).sort();
}

describe('db:import and db:export', () => {
  it('round-trips a lowdb folder through PostgreSQL with every collection and the counts equal', async () => {
    const from = makeTempDir('meridian-import-');
    await fillLowdb(from);
    // A processed image (bytes of its own, so a copy is told from a missing file) goes with the store both ways.
    const image = path.join('images', 'ab'.repeat(16), '1200.webp');
    fs.mkdirSync(path.dirname(path.join(from, image)), { recursive: true });
    fs.writeFileSync(path.join(from, image), 'image bytes');
    const url = await databaseFor(from);
    const serverDir = makeTempDir('meridian-pg-data-');
    const imported = db(['import', '--from', from], { DATABASE_URL: url, DATA_DIR: serverDir });
    expect(fs.readFileSync(path.join(serverDir, image), 'utf8')).toBe('image bytes');
    expect(imported.out).toMatch(/images: 1 files/);
    expect(imported.out).toMatch(/counts agree/);
    expect(imported.code, imported.out).toBe(0);
    expect(imported.out).toMatch(/articles\s+2\b/);
    expect(imported.out).toMatch(/votes\s+3\b/);

    // The imported database behaves like the folder it came from.
    const pg = await openStore(makeTempDir(), 'write', { databaseUrl: url });
    opened.push(pg);
    expect((await pg.articles.getBySlug('kept'))?.title).toBe('Volcano story, updated');
    const kept = (await pg.articles.getBySlug('kept'))!;
    expect(await pg.counters.get(kept.id)).toEqual({ likes: 11, dislikes: 1, views: 3 });
    expect(await pg.counters.visitorVote(kept.id, 'v1')).toBe('dislike');
    expect(await pg.trash.slugExists('binned')).toBe(true);
    expect((await pg.subscribers.getByToken('tokenbbbbbbbbbbbbbbb'))?.email).toBe('two@x.io');
    expect((await pg.jobs.list(10)).map((j) => j.path)).toEqual(['/b', '/a']);
    expect(sortCounts(await pg.analytics.exportAll())).toEqual(sortCounts(VIEW_BUCKETS));
    await pg.close();

    const to = path.join(makeTempDir('meridian-export-'), 'data');
    const exported = db(['export', to], { DATABASE_URL: url, DATA_DIR: serverDir });
    expect(exported.code, exported.out).toBe(0);
    expect(exported.out).toMatch(/counts agree/);
    expect(fs.readFileSync(path.join(to, image), 'utf8')).toBe('image bytes');
    expect(await snapshot(to)).toEqual(await snapshot(from));
    const back = await openStore(to, 'read', { databaseUrl: undefined });
    opened.push(back);
    expect(sortCounts(await back.analytics.exportAll())).toEqual(sortCounts(VIEW_BUCKETS));
  });

  it('refuses to import into a database that already holds data, and leaves it as it was', async () => {
    const from = makeTempDir('meridian-import-');
    await fillLowdb(from);
    const url = await databaseFor(makeTempDir());
    const pg = await openStore(makeTempDir(), 'write', { databaseUrl: url });
    opened.push(pg);
    await pg.articles.insert(articleRecord({ slug: 'already-here' }));
    const result = db(['import', '--from', from], { DATABASE_URL: url });
    expect(result.code).toBe(1);
    expect(result.out).toMatch(/already holds data/);
    expect(await pg.articles.count({})).toBe(1);
  });

  it('refuses to export into a folder that is not empty', async () => {
    const url = await databaseFor(makeTempDir());
    const pg = await openStore(makeTempDir(), 'write', { databaseUrl: url });
    opened.push(pg);
    const to = makeTempDir('meridian-export-');
    await openStore(to, 'write', { databaseUrl: undefined }).then((s) => s.close());
    const result = db(['export', to], { DATABASE_URL: url, DATA_DIR: makeTempDir() });
    expect(result.code).toBe(1);
    expect(result.out).toMatch(/not empty/);
  });
});
