/**
 * Lowdb vote buckets read on demand: counts-only parsing at open, both key orders, one read per cold
 * bucket, no vote lost to eviction, and buckets held as per-article text decoded one article at a time.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.ts';
import { parseVoteBucket, parseVoteCounts, stringifyVoteBucket, type VoteBucket } from '../../src/store/lowdb/vote-bucket.ts';
import { LazyEntries, splitMembers } from '../../src/store/lowdb/lazy-entries.ts';
import { bucketFile, LazyBucketSet, voteBucket } from '../../src/store/lowdb/layout.ts';
import { closeQuietly, makeTempDir } from './support.ts';

const ODD_IDS = ['plain', 'votes', 'a,"votes":{', 'back\\slash\\', 'quo"te', 'ünï\u2028cödé 🗞', 'counts'];

type PlainBucket = {
  counts: Record<string, { likes: number; dislikes: number }>;
  votes: Record<string, Record<string, 'like' | 'dislike'>>;
};

/** A bucket file's content with article and visitor ids that need escaping or look like the file's own keys. */
function oddBucket(): PlainBucket {
  const bucket: PlainBucket = { counts: {}, votes: {} };
  ODD_IDS.forEach((id, i) => {
    bucket.counts[id] = { likes: i + 1, dislikes: i };
    bucket.votes[id] = Object.fromEntries(ODD_IDS.map((visitor, j) => [visitor, j % 2 ? 'dislike' : 'like']));
  });
  return bucket;
}

const plain = (bucket: VoteBucket): PlainBucket => ({ counts: bucket.counts.toJSON(), votes: bucket.votes.toJSON() });

let store: Store | undefined;
afterEach(async () => {
  if (store) await closeQuietly(store);
  store = undefined;
});

describe('parseVoteCounts', () => {
  it('reads the counts of a counts-first file, odd article and visitor ids included', () => {
    const bucket = oddBucket();
    const bytes = Buffer.from(JSON.stringify(bucket));
    expect(bytes.toString().startsWith('{"counts":')).toBe(true);
    expect(parseVoteCounts(bytes)).toEqual(bucket.counts);
  });

  it('falls back to a full parse for a file in the older votes-first order', () => {
    const bucket = oddBucket();
    const bytes = Buffer.from(JSON.stringify({ votes: bucket.votes, counts: bucket.counts }));
    expect(parseVoteCounts(bytes)).toEqual(bucket.counts);
    // A whole read puts counts first, so the next write has the cheap order.
    const written = stringifyVoteBucket(parseVoteBucket(bytes));
    expect(written.startsWith('{"counts":')).toBe(true);
    expect(JSON.parse(written)).toEqual(bucket);
    expect(plain(parseVoteBucket(bytes))).toEqual(bucket);
  });

  it('does not stop at a `,"votes":` inside the counts (an article called "votes")', () => {
    const bytes = Buffer.from(JSON.stringify({ counts: { a: { likes: 1, dislikes: 0 }, votes: { likes: 2, dislikes: 3 } }, votes: {} }));
    expect(parseVoteCounts(bytes)).toEqual({ a: { likes: 1, dislikes: 0 }, votes: { likes: 2, dislikes: 3 } });
  });

  it('fails on a file that is not JSON', () => {
    expect(() => parseVoteCounts(Buffer.from('{"counts":{"a":'))).toThrow();
  });
});

describe('vote buckets held per article', () => {
  it('splits a counts-first file per article without decoding it, and writes back exactly what it read', () => {
    const bucket = oddBucket();
    const text = JSON.stringify(bucket);
    const parsed = parseVoteBucket(Buffer.from(text));
    expect(plain(parsed)).toEqual(bucket);
    // Nothing decoded, nothing changed: the same bytes (per article, the text as read).
    expect(stringifyVoteBucket(parseVoteBucket(Buffer.from(text)))).toBe(text);
  });

  it('decodes only the article a vote is about, and folds it back into text when written', () => {
    const parsed = parseVoteBucket(Buffer.from(JSON.stringify(oddBucket())));
    const votes = parsed.votes.ensure('quo"te', () => ({}));
    votes['new visitor'] = 'like';
    parsed.counts.ensure('quo"te', () => ({ likes: 0, dislikes: 0 })).likes++;
    parsed.votes.ensure('brand new', () => ({}))['v'] = 'dislike';
    const again = JSON.parse(stringifyVoteBucket(parsed)) as PlainBucket;
    expect(again.votes['quo"te']!['new visitor']).toBe('like');
    expect(again.counts['quo"te']!.likes).toBe(oddBucket().counts['quo"te']!.likes + 1);
    expect(again.votes['brand new']).toEqual({ v: 'dislike' });
    expect(again.votes['plain']).toEqual(oddBucket().votes['plain']);
    parsed.votes.delete('plain');
    expect(parsed.votes.has('plain')).toBe(false);
    expect(Object.keys(JSON.parse(stringifyVoteBucket(parsed)).votes)).not.toContain('plain');
  });

  it('splitMembers refuses anything but a compact object of flat objects (the caller then decodes it whole)', () => {
    expect(splitMembers('{}')).toEqual(new Map());
    expect(splitMembers('{"a":{"x":"like"},"b":{}}')).toEqual(
      new Map([
        ['a', '{"x":"like"}'],
        ['b', '{}'],
      ]),
    );
    expect(splitMembers('{"a":{"x":{"y":1}}}')).toBeUndefined();
    expect(splitMembers('{ "a": {} }')).toBeUndefined();
    expect(splitMembers('{"a":{}}x')).toBeUndefined();
    expect(splitMembers('{"a":{},}')).toBeUndefined();
    expect(splitMembers('{"a":{"x":"}"}}')).toEqual(new Map([['a', '{"x":"}"}']]));
  });

  it('reads a file whose votes are not in that form by decoding it whole', () => {
    const text = JSON.stringify({ counts: { a: { likes: 1, dislikes: 0 } }, votes: { a: { v: 'like', nested: { odd: true } } } });
    expect(parseVoteBucket(Buffer.from(text)).votes.get('a')).toEqual({ v: 'like', nested: { odd: true } });
  });
});

describe('LazyBucketSet', () => {
  const options = (parse: (bytes: Buffer) => VoteBucket, cacheSize: number) => ({
    empty: (): VoteBucket => ({ counts: LazyEntries.empty(), votes: LazyEntries.empty() }),
    parse,
    stringify: stringifyVoteBucket,
    head: parseVoteCounts,
    cacheSize,
    readOnly: false,
  });

  it('reads only the heads at open, and a cold bucket once for two callers at the same time', async () => {
    const dir = makeTempDir();
    const file = bucketFile(dir, 'votes', 5);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(oddBucket()));
    let reads = 0;
    const heads: number[] = [];
    const set = await LazyBucketSet.open<VoteBucket, unknown>(
      dir,
      'votes',
      options((bytes) => (reads++, parseVoteBucket(bytes)), 4),
      (b) => void heads.push(b),
    );
    expect(heads).toEqual([5]);
    expect(reads).toBe(0);
    const add = (visitor: string) =>
      set.use(5, async (data, write) => {
        data.votes.get('plain')![visitor] = 'like';
        data.counts.get('plain')!.likes++;
        await write();
      });
    await Promise.all([add('x1'), add('x2')]);
    expect(reads).toBe(1);
    const onDisk = parseVoteBucket(fs.readFileSync(file));
    expect(onDisk.votes.get('plain')).toMatchObject({ x1: 'like', x2: 'like' });
    expect(onDisk.counts.get('plain')!.likes).toBe(3);
    expect(fs.readFileSync(file, 'utf8').startsWith('{"counts":')).toBe(true);
  });

  it('keeps at most cacheSize buckets, and never drops one in use (changed, write pending)', async () => {
    const dir = makeTempDir();
    const set = await LazyBucketSet.open<VoteBucket, unknown>(dir, 'votes', options(parseVoteBucket, 1), () => {});
    const vote = (b: number, visitor: string) =>
      set.use(b, async (data, write) => {
        data.votes.ensure('a', () => ({}))[visitor] = 'like';
        await write();
      });
    // Bucket 0 stays in use (changed, its write not started) while other buckets push it out of the cache.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = set.use(0, async (data, write) => {
      data.votes.ensure('a', () => ({})).v0 = 'like';
      await gate;
      await write();
    });
    for (let i = 1; i <= 5; i++) await vote(i, `w${i}`);
    // A reload here would read a file written before v0 (or none): the bucket must still be the one in memory.
    const seen = await set.use(0, (data) => ({ ...data.votes.get('a') }));
    expect(seen).toMatchObject({ v0: 'like' });
    const all: Promise<void>[] = [];
    for (let i = 1; i < 20; i++) all.push(vote(0, `v${i}`), vote(1 + (i % 5), `w${i}`));
    release();
    await Promise.all([first, ...all]);
    expect(set.loadedCount).toBeLessThanOrEqual(1);
    expect(Object.keys(parseVoteBucket(fs.readFileSync(bucketFile(dir, 'votes', 0))).votes.get('a')!)).toHaveLength(20);
    await set.settle();
  });
});

describe('lowdb votes on demand', () => {
  it('counts votes stored in the older key order, and rewrites the bucket counts-first at its next vote', async () => {
    const dir = makeTempDir();
    const b = voteBucket('art', 'old-visitor');
    const file = bucketFile(dir, 'votes', b);
    store = await openStore(dir);
    await store.close();
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify({ votes: { art: { 'old-visitor': 'dislike' } }, counts: { art: { likes: 0, dislikes: 1 } } }));
    store = await openStore(dir);
    expect(await store.counters.get('art')).toMatchObject({ likes: 0, dislikes: 1 });
    expect(await store.counters.visitorVote('art', 'old-visitor')).toBe('dislike');
    // Two new visitors at once, on the same cold bucket when they hash there.
    const fresh = ['n1', 'n2', 'n3', 'n4', 'n5'];
    await Promise.all(fresh.map((v) => store!.counters.vote('art', v, 'like')));
    await store.counters.vote('art', 'old-visitor', 'like');
    expect(await store.counters.get('art')).toMatchObject({ likes: 6, dislikes: 0 });
    await store.close();
    expect(fs.readFileSync(file, 'utf8').startsWith('{"counts":')).toBe(true);
    store = await openStore(dir);
    expect(await store.counters.get('art')).toMatchObject({ likes: 6, dislikes: 0 });
    for (const v of fresh) expect(await store.counters.visitorVote('art', v)).toBe('like');
  });

  it('counts them at open for a writer, and on the first tally asked of a read snapshot', async () => {
    const dir = makeTempDir();
    store = await openStore(dir);
    await store.counters.vote('art', 'v1', 'like');
    await store.counters.vote('art', 'v2', 'dislike');
    await store.close();
    store = undefined;
    // A bucket file a writer cannot read: a writer's open fails on it; a snapshot opens (a build asks no tally).
    const broken = bucketFile(dir, 'votes', voteBucket('other', 'v9'));
    expect(broken).not.toBe(bucketFile(dir, 'votes', voteBucket('art', 'v1')));
    expect(broken).not.toBe(bucketFile(dir, 'votes', voteBucket('art', 'v2')));
    fs.mkdirSync(path.dirname(broken), { recursive: true });
    fs.writeFileSync(broken, '{"counts":{"other":');
    await expect(openStore(dir)).rejects.toThrow(/not valid JSON/);
    const snapshot = await openStore(dir, 'read');
    try {
      await expect(snapshot.counters.get('art')).rejects.toThrow(/not valid JSON/);
    } finally {
      await snapshot.close();
    }
    fs.rmSync(broken);
    const reader = await openStore(dir, 'read');
    try {
      const [one, many] = await Promise.all([reader.counters.get('art'), reader.counters.getMany(['art', 'none'])]);
      expect(one).toMatchObject({ likes: 1, dislikes: 1 });
      expect(many.get('art')).toEqual(one);
      expect(many.get('none')).toMatchObject({ likes: 0, dislikes: 0 });
    } finally {
      await reader.close();
    }
  });
});
