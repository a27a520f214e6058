/**
 * The PostgreSQL store shared by several servers (two stores open on one database, as two servers
 * would be): every compare-and-set happens exactly once, votes and limits are counted once, and
 * sessions and rate-limit windows survive a restart.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.ts';
import { databaseFor } from '../helpers/postgres.ts';
import { articleRecord, closeQuietly, makeTempDir } from './support.ts';

const opened: Store[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await closeQuietly(store);
});

/** Two stores on one fresh database, each with its own DATA_DIR, like two servers. */
async function twoServers(): Promise<[Store, Store, string]> {
  const url = await databaseFor(makeTempDir('meridian-shared-'));
  const a = await openStore(makeTempDir(), 'write', { databaseUrl: url });
  const b = await openStore(makeTempDir(), 'write', { databaseUrl: url });
  opened.push(a, b);
  return [a, b, url];
}

describe('one PostgreSQL database, two servers', () => {
  it('publishes a scheduled article exactly once, whichever server asks', async () => {
    const [a, b] = await twoServers();
    const scheduled = articleRecord({ status: 'scheduled', publishedAt: undefined, scheduledFor: '2025-01-01T00:00:00.000Z' });
    await a.articles.insert(scheduled);
    const version = await a.articles.version();
    const now = '2025-06-01T00:00:00.000Z';
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).articles.publishIfScheduled(scheduled.id, now)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await b.articles.get(scheduled.id)).toMatchObject({ status: 'published', publishedAt: now, version: 2 });
    expect(await a.articles.version()).toBe(version + 1);
  });

  it('lets exactly one of two concurrent saves of the same version win', async () => {
    const [a, b] = await twoServers();
    const record = articleRecord();
    await a.articles.insert(record);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).articles.replaceIfVersion({ ...record, title: `Edit ${i}` }, 1)),
    );
    const saved = results.filter((r) => r && 'saved' in r);
    expect(saved).toHaveLength(1);
    const winner = (saved[0] as { saved: { title: string } }).saved.title;
    for (const r of results) if (r && 'conflict' in r) expect(r.conflict).toMatchObject({ title: winner, version: 2 });
    expect((await b.articles.get(record.id))?.version).toBe(2);
  });

  it('counts one vote per visitor and every view, with votes racing on both servers', async () => {
    const [a, b] = await twoServers();
    const votes = [];
    for (let i = 0; i < 40; i++) votes.push((i % 2 ? a : b).counters.vote('x', `v${i % 10}`, i < 20 ? 'like' : 'dislike'));
    for (let i = 0; i < 30; i++) votes.push((i % 2 ? a : b).counters.incrementViews('x'));
    await Promise.all(votes);
    const counters = await a.counters.get('x');
    expect(counters.likes + counters.dislikes).toBe(10);
    expect(counters.views).toBe(30);
    let likes = 0;
    for (let v = 0; v < 10; v++) if ((await b.counters.visitorVote('x', `v${v}`)) === 'like') likes++;
    expect(counters.likes).toBe(likes);
  });

  it('shares rate-limit windows between servers, and keeps them and sessions across a restart', async () => {
    const [a, b, url] = await twoServers();
    expect(await a.limits.hit('ip:1', 60_000, 1000)).toEqual({ count: 1, resetAt: 61_000 });
    const hits = await Promise.all(Array.from({ length: 19 }, (_, i) => (i % 2 ? a : b).limits.hit('ip:1', 60_000, 1001 + i)));
    expect(hits.map((h) => h.count).sort((x, y) => x - y)).toEqual(Array.from({ length: 19 }, (_, i) => i + 2));
    expect(new Set(hits.map((h) => h.resetAt))).toEqual(new Set([61_000]));
    await a.sessions.insert({ id: 's1', userId: 'u1', expiresAt: '2099-01-01T00:00:00.000Z', createdAt: '2025-01-01T00:00:00.000Z' });
    await a.limits.set('throttle:admin', { failures: 3 }, 90_000);
    await a.close();
    const restarted = await openStore(makeTempDir(), 'write', { databaseUrl: url });
    opened.push(restarted);
    expect(await restarted.limits.hit('ip:1', 60_000, 2000)).toEqual({ count: 21, resetAt: 61_000 });
    expect(await restarted.limits.get('throttle:admin', 2000)).toEqual({ failures: 3 });
    expect(await restarted.sessions.get('s1')).toMatchObject({ userId: 'u1' });
    expect(await b.sessions.get('s1')).toBeDefined();
  });

  it('coalesces paths queued on both servers at once into one job each, without deadlocking', async () => {
    const [a, b] = await twoServers();
    const paths = Array.from({ length: 30 }, (_, i) => `/p${i}`);
    for (let round = 0; round < 10; round++) {
      // Overlapping batches in opposite orders: each server locks the rows the other wants next.
      const added = await Promise.all([
        a.jobs.enqueue(paths, `2025-01-01T00:00:${String(round).padStart(2, '0')}.000Z`),
        b.jobs.enqueue([...paths].reverse(), `2025-01-01T00:00:${String(round).padStart(2, '0')}.500Z`),
      ]);
      expect(added[0] + added[1]).toBe(round === 0 ? 30 : 0);
    }
    expect(await a.jobs.size()).toBe(30);
    // The queue keeps the order a batch was given in.
    const c = (await twoServers())[0];
    await c.jobs.enqueue(['/z', '/a', '/m'], '2025-01-01T00:00:00.000Z');
    expect((await c.jobs.list(10)).map((j) => j.path)).toEqual(['/z', '/a', '/m']);
  });

  it('gives a job to one server until its lease runs out, then to another', async () => {
    const [a, b] = await twoServers();
    await a.jobs.enqueue(['/article/x'], '2025-01-01T00:00:00.000Z');
    const [job] = await b.jobs.list(1);
    const claims = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).jobs.claim(job!.id, i % 2 ? 'a' : 'b', 5000, 1000)),
    );
    expect(claims.filter(Boolean).length).toBeGreaterThanOrEqual(1);
    const holder = (await a.jobs.claim(job!.id, 'a', 5000, 1000)) ? 'a' : 'b';
    const other = holder === 'a' ? 'b' : 'a';
    // Every claim that succeeded was the holder's own.
    claims.forEach((won, i) => won && expect(i % 2 ? 'a' : 'b').toBe(holder));
    // The holder renews with a short lease (timed by the database's clock, whatever times the servers pass).
    expect(await (holder === 'a' ? a : b).jobs.claim(job!.id, holder, 1_000_400, 1_000_000)).toBe(true);
    expect(await b.jobs.claim(job!.id, other, 9000, 0)).toBe(false);
    // The holder was killed: its lease runs out and the other server takes the job.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await b.jobs.claim(job!.id, other, 9000, 5000)).toBe(true);
    expect(await a.jobs.claim(job!.id, holder, 9000, 6000)).toBe(false);
    // A failure gives the claim up: anyone may retry it.
    await b.jobs.fail(job!.id, 'boom');
    expect(await a.jobs.claim(job!.id, holder, 12_000, 6000)).toBe(true);
  });

  it('counts login failures racing on both servers, starts a briefing run once and gives each recipient to one server', async () => {
    const [a, b] = await twoServers();
    const bump = (n = 0) => ({ value: n + 1, expiresAt: 10_000 });
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).limits.update<number>('login:admin', 0, bump)));
    expect(await b.limits.get('login:admin', 0)).toBe(20);
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
    expect((await Promise.all([a.briefings.startRun(run), b.briefings.startRun(run)])).filter(Boolean)).toHaveLength(1);
    const claims = await Promise.all(
      Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).briefings.claimDelivery(run.id, `s${i % 10}`, `t${i}`)),
    );
    expect(claims.filter(Boolean)).toHaveLength(10);
    const secrets = await Promise.all([a.meta.setIfAbsent('appSecret', 'from-a'), b.meta.setIfAbsent('appSecret', 'from-b')]);
    expect(secrets[0]).toBe(secrets[1]);
  });

  it('tells the other server of a page stored, once it is committed', async () => {
    const [a, b] = await twoServers();
    const heard: string[] = [];
    const stop = await b.pages.listen(
      (note) => void b.pages.get(note.path).then((page) => heard.push(`${note.origin} ${new TextDecoder().decode(page!.body)}`)),
    );
    await a.pages.put('/article/x', new TextEncoder().encode('<p>new</p>'), 'server-a');
    for (let i = 0; i < 200 && heard.length < 1; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    await stop();
    expect(heard).toEqual(['server-a <p>new</p>']);
  });

  it('prunes stored page removals older than the age given, and nothing else', async () => {
    const [a, b] = await twoServers();
    const body = new TextEncoder().encode('<p>kept</p>');
    await a.pages.put('/article/kept', body, 'a');
    await a.pages.put('/article/gone', undefined, 'a');
    // Too young: the removal stays for servers that were away.
    expect(await b.pages.pruneRemovals(Date.now() - 60_000)).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const cutoff = Date.now();
    await a.pages.put('/article/late', undefined, 'a');
    expect(await b.pages.pruneRemovals(cutoff)).toBe(1);
    expect((await a.pages.list()).map((p) => p.path)).toEqual(['/article/kept', '/article/late']);
    expect(await a.pages.get('/article/kept')).toMatchObject({ body });
  });
});
