/** Layout 2 on real files: each write rewrites only the files of what it changed, and no folder grows past a few hundred files. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.ts';
import { storeJsonFiles } from '../../src/store/lowdb/inspect.ts';
import { articleFile } from '../../src/store/lowdb/layout.ts';
import { articleRecord, closeQuietly, makeTempDir } from './support.ts';

let dir: string;
let store: Store;

beforeEach(async () => {
  dir = makeTempDir();
  store = await openStore(dir);
});

afterEach(async () => {
  await closeQuietly(store);
});

/** Every store file with its content and inode change time (a rename gives a new inode). */
function snapshot(): Map<string, string> {
  const out = new Map<string, string>();
  for (const file of storeJsonFiles(dir)) {
    const stat = fs.statSync(file, { bigint: true });
    out.set(path.relative(dir, file), `${stat.ino}:${stat.mtimeNs}:${fs.readFileSync(file, 'utf8')}`);
  }
  return out;
}

/** The files a call created, changed or removed. */
async function touchedBy(call: () => Promise<unknown>): Promise<string[]> {
  const before = snapshot();
  await call();
  const after = snapshot();
  const touched = new Set<string>();
  for (const [file, state] of after) if (before.get(file) !== state) touched.add(file);
  for (const file of before.keys()) if (!after.has(file)) touched.add(file);
  return [...touched].sort();
}

describe('a write touches only what changed', () => {
  beforeEach(async () => {
    // A populated store, so an untouched file is a real claim.
    for (let i = 0; i < 60; i++) {
      const article = articleRecord({ section: i % 2 ? 'world' : 'tech' });
      await store.articles.insert(article);
      await store.counters.vote(article.id, `visitor-${i}`, 'like');
      await store.counters.incrementViews(article.id);
      await store.comments.insert({
        id: `c${i}`,
        articleId: article.id,
        authorName: 'A',
        authorEmail: 'a@x.io',
        content: 'Hi',
        status: 'visible',
        createdAt: new Date(Date.UTC(2025, 0, 1, 0, i)).toISOString(),
      });
      await store.subscribers.upsert({
        id: `s${i}`,
        email: `s${i}@x.io`,
        token: `token-${i}-xxxxxxxxxxxx`,
        createdAt: '2025-01-01T00:00:00.000Z',
      });
      await store.sessions.insert({
        id: `session-${i}`,
        userId: 'u1',
        expiresAt: '2099-01-01T00:00:00.000Z',
        createdAt: '2025-01-01T00:00:00.000Z',
      });
    }
    await store.jobs.enqueue(
      Array.from({ length: 60 }, (_, i) => `/page/${i}`),
      '2025-01-01T00:00:00.000Z',
    );
  });

  it('an article save rewrites its own file and the version counter, nothing else', async () => {
    const article = (await store.articles.list({}, { offset: 7, limit: 1 }))[0]!;
    const file = path.relative(dir, articleFile(dir, article.id));
    expect(await touchedBy(() => store.articles.replace({ ...article, title: 'Changed' }))).toEqual(['articles-version.json', file].sort());
    const created = articleRecord();
    expect(await touchedBy(() => store.articles.insert(created))).toEqual(
      ['articles-version.json', path.relative(dir, articleFile(dir, created.id))].sort(),
    );
    expect(await touchedBy(() => store.articles.delete(created.id))).toEqual(
      ['articles-version.json', path.relative(dir, articleFile(dir, created.id))].sort(),
    );
    expect(fs.existsSync(articleFile(dir, created.id))).toBe(false);
  });

  it('a vote rewrites one vote bucket, holding the vote and the count it adds to', async () => {
    const article = (await store.articles.list({}, { offset: 3, limit: 1 }))[0]!;
    const touched = await touchedBy(() => store.counters.vote(article.id, 'new-visitor', 'dislike'));
    expect(touched).toHaveLength(1);
    expect(touched[0]).toMatch(/^votes\/[0-9a-f]{2}\/[0-9a-f]\.json$/);
    const bucket = JSON.parse(fs.readFileSync(path.join(dir, touched[0]!), 'utf8')) as {
      votes: Record<string, Record<string, string>>;
      counts: Record<string, { likes: number; dislikes: number }>;
    };
    expect(bucket.votes[article.id]!['new-visitor']).toBe('dislike');
    const kinds = Object.values(bucket.votes[article.id]!);
    expect(bucket.counts[article.id]).toEqual({
      likes: kinds.filter((k) => k === 'like').length,
      dislikes: kinds.filter((k) => k === 'dislike').length,
    });
  });

  it('a view, a comment, a sign-up, a session and a job each rewrite one bucket of their own', async () => {
    const article = (await store.articles.list({}, { offset: 5, limit: 1 }))[0]!;
    expect(await touchedBy(() => store.counters.incrementViews(article.id))).toEqual([expect.stringMatching(/^views\/[0-9a-f]{3}\.json$/)]);
    expect(
      await touchedBy(() =>
        store.comments.insert({
          id: 'new',
          articleId: article.id,
          authorName: 'B',
          authorEmail: 'b@x.io',
          content: 'New',
          status: 'visible',
          createdAt: '2026-01-01T00:00:00.000Z',
        }),
      ),
    ).toEqual([expect.stringMatching(/^comments\/[0-9a-f]{3}\.json$/)]);
    expect(await touchedBy(() => store.comments.setStatus('c3', 'hidden'))).toEqual([expect.stringMatching(/^comments\//)]);
    expect(
      await touchedBy(() =>
        store.subscribers.upsert({ id: 'n', email: 'new@x.io', token: 'token-new-xxxxxxxxxxxx', createdAt: '2025-01-01T00:00:00.000Z' }),
      ),
    ).toEqual([expect.stringMatching(/^subscribers\/[0-9a-f]{3}\.json$/)]);
    expect(await touchedBy(() => store.sessions.setExpiry('session-4', '2099-02-01T00:00:00.000Z'))).toEqual([
      expect.stringMatching(/^sessions\/[0-9a-f]{3}\.json$/),
    ]);
    expect(await touchedBy(() => store.jobs.enqueue(['/new-page'], '2025-01-02T00:00:00.000Z'))).toEqual([
      expect.stringMatching(/^jobs\/[0-9a-f]{3}\.json$/),
    ]);
  });
});

describe('fan-out', () => {
  it('spreads articles over hashed folders, a few files each', async () => {
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 1500; i++) writes.push(store.articles.insert(articleRecord()));
    await Promise.all(writes);
    const folders = fs.readdirSync(path.join(dir, 'articles'));
    expect(folders.length).toBe(256);
    const sizes = folders.map((f) => fs.readdirSync(path.join(dir, 'articles', f)).length);
    // 1,500 over 256 folders: about 6 each; 100,000 gives about 400.
    expect(Math.max(...sizes)).toBeLessThan(20);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(1500);
    await store.close();
    store = await openStore(dir);
    expect(await store.articles.count({})).toBe(1500);
  });
});
