/**
 * Vote buckets that split as the votes grow (linear hashing, lowdb): past VOTES_PER_BUCKET votes per
 * bucket a vote splits one bucket, every vote stays where lookups find it, and a process killed with
 * SIGKILL after any of a split's writes loses no acknowledged vote and counts none twice.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.ts';
import { readCollectionDocument } from '../../src/store/lowdb/inspect.ts';
import {
  BUCKETS,
  bucketFile,
  readVoteSplit,
  voteBucket,
  voteBucketCount,
  voteBucketsOf,
  voteSplitFor,
  VOTES_PER_BUCKET,
} from '../../src/store/lowdb/layout.ts';
import { closeQuietly, makeTempDir } from './support.ts';

const STORE_MODULE = pathToFileURL(path.resolve(import.meta.dirname, '../../src/store/index.ts')).href;
/** The first split is of bucket 0 (article group 0): the first article is in that group, so it has votes to move. */
const GROUP_0 = Array.from({ length: 1000 }, (_, i) => `article-g${i}`).find((id) => voteBucketsOf(id)[0] === 0)!;
const ARTICLES = [GROUP_0, ...Array.from({ length: 23 }, (_, i) => `article-${i}`)];
/** Just past what 1,024 buckets hold: the next vote splits exactly one bucket. */
const PREFILLED = VOTES_PER_BUCKET * BUCKETS.votes + 20;

type Expected = Map<string, Map<string, 'like' | 'dislike'>>;

/**
 * A store folder holding PREFILLED votes in the 1,024 unsplit buckets, written as the store writes
 * them (counts first), as an existing DATA_DIR that grew past the threshold would be. Written once
 * (the votes are the same every time): each test gets a copy of the folder, and of the votes to expect.
 */
async function prefilledStore(): Promise<{ dir: string; expected: Expected }> {
  const prefilled = await (template ??= writePrefilledStore());
  const dir = makeTempDir('meridian-vote-split-');
  fs.cpSync(prefilled.dir, dir, { recursive: true });
  return { dir, expected: new Map([...prefilled.expected].map(([articleId, votes]) => [articleId, new Map(votes)])) };
}

let template: Promise<{ dir: string; expected: Expected }> | undefined;

async function writePrefilledStore(): Promise<{ dir: string; expected: Expected }> {
  const dir = makeTempDir('meridian-vote-split-template-');
  await (await openStore(dir)).close();
  const expected: Expected = new Map(ARTICLES.map((id) => [id, new Map()]));
  const buckets = new Map<
    number,
    { counts: Record<string, { likes: number; dislikes: number }>; votes: Record<string, Record<string, string>> }
  >();
  for (let v = 0; v < PREFILLED; v++) {
    const articleId = ARTICLES[v % ARTICLES.length]!;
    const visitorId = `visitor${v.toString(36).padStart(12, '0')}`;
    const kind = v % 3 ? 'like' : 'dislike';
    expected.get(articleId)!.set(visitorId, kind);
    const b = voteBucket(articleId, visitorId);
    let bucket = buckets.get(b);
    if (!bucket) buckets.set(b, (bucket = { counts: {}, votes: {} }));
    (bucket.votes[articleId] ??= {})[visitorId] = kind;
    const count = (bucket.counts[articleId] ??= { likes: 0, dislikes: 0 });
    if (kind === 'like') count.likes++;
    else count.dislikes++;
  }
  for (const [b, bucket] of buckets) {
    const file = bucketFile(dir, 'votes', b);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(bucket));
  }
  return { dir, expected };
}

const tally = (votes: Map<string, string>) => {
  const kinds = [...votes.values()];
  const likes = kinds.filter((k) => k === 'like').length;
  return { likes, dislikes: kinds.length - likes };
};

/** Every expected vote on disk exactly once, and the counts the store opens with equal to them. */
async function expectVotes(dir: string, expected: Expected): Promise<void> {
  const document = readCollectionDocument(dir, 'votes') as { votes: Record<string, Record<string, string>> };
  const total = [...expected.values()].reduce((n, votes) => n + votes.size, 0);
  expect(Object.values(document.votes).reduce((n, byVisitor) => n + Object.keys(byVisitor).length, 0)).toBe(total);
  for (const [articleId, votes] of expected) {
    const wanted = Object.fromEntries(votes);
    // toEqual walks thousands of votes slowly: it runs (and shows the difference) when they are not the same.
    if (!isDeepStrictEqual(document.votes[articleId], wanted)) expect(document.votes[articleId]).toEqual(wanted);
  }
  const store = await openStore(dir, 'read');
  try {
    for (const [articleId, votes] of expected) expect(await store.counters.get(articleId)).toMatchObject(tally(votes));
  } finally {
    await store.close();
  }
}

/** Opens the store in a child process, casts one vote (printing once it is answered), and SIGKILLs it where the split pauses. */
async function killSplitAt(dir: string, point: string, vote: { articleId: string; visitorId: string }): Promise<void> {
  const script = `const { openStore } = await import(${JSON.stringify(STORE_MODULE)});
const store = await openStore(${JSON.stringify(dir)});
await store.counters.vote(${JSON.stringify(vote.articleId)}, ${JSON.stringify(vote.visitorId)}, 'like');
console.log('voted');`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, MERIDIAN_VOTE_SPLIT_PAUSE: point },
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('voted') && output.includes(`vote split paused at ${point}`)) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the split did not pause at ${point} (exit ${code}): ${output}`)));
  });
  child.kill('SIGKILL');
  await exited;
}

const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await closeQuietly(store);
});

describe('vote buckets that split as the votes grow', () => {
  it('splits one bucket when the votes pass the threshold, and every vote is still found and counted once', async () => {
    const { dir, expected } = await prefilledStore();
    const store = await openStore(dir);
    stores.push(store);
    expect(readVoteSplit(dir)).toEqual({ level: 10, next: 0 });
    await store.counters.vote('article-0', 'newcomer', 'dislike');
    expected.get('article-0')!.set('newcomer', 'dislike');
    // Some of bucket 0's votes moved (about half of what group 0's article has there).
    const moved = [...expected.get(GROUP_0)!.keys()].filter((v) => voteBucket(GROUP_0, v, { level: 10, next: 1 }) === 1024);
    expect(moved.length).toBeGreaterThan(50);
    await store.close();
    stores.pop();

    // Bucket 0 handed the votes that the next level addresses to bucket 1,024.
    expect(readVoteSplit(dir)).toEqual({ level: 10, next: 1 });
    expect(fs.existsSync(bucketFile(dir, 'votes', 1024))).toBe(true);
    await expectVotes(dir, expected);

    const reopened = await openStore(dir);
    stores.push(reopened);
    // A visitor whose vote moved: found in its new bucket, and changing it moves the counts by one.
    const [articleId, visitorId] = [...expected]
      .flatMap(([a, votes]) => [...votes.keys()].map((v) => [a, v] as const))
      .find(([a, v]) => voteBucket(a, v, readVoteSplit(dir)) === 1024)!;
    const before = expected.get(articleId)!.get(visitorId)!;
    expect(await reopened.counters.visitorVote(articleId, visitorId)).toBe(before);
    const flipped = before === 'like' ? 'dislike' : 'like';
    await reopened.counters.vote(articleId, visitorId, flipped);
    expected.get(articleId)!.set(visitorId, flipped);
    expect(await reopened.counters.get(articleId)).toMatchObject(tally(expected.get(articleId)!));
    // Deleting an article removes its votes from every bucket it can be in, split ones included.
    expect(voteBucketsOf(GROUP_0, readVoteSplit(dir))).toContain(1024);
    await reopened.counters.deleteArticle(GROUP_0);
    expected.delete(GROUP_0);
    await reopened.close();
    stores.pop();
    await expectVotes(dir, expected);
    expect(Object.keys((readCollectionDocument(dir, 'votes') as { votes: object }).votes)).not.toContain(GROUP_0);
  });

  it.each(['new-bucket', 'state', 'old-bucket'])(
    'killed with SIGKILL after the split wrote its %s, the next open loses no acknowledged vote and counts none twice',
    async (point) => {
      const { dir, expected } = await prefilledStore();
      await killSplitAt(dir, point, { articleId: 'article-5', visitorId: 'acknowledged' });
      expected.get('article-5')!.set('acknowledged', 'like');
      fs.rmSync(path.join(dir, '.lock'), { force: true });
      // Before the state names the new bucket it is ignored; after, the old bucket's copies are dropped.
      expect(readVoteSplit(dir).pending).toBe(point === 'new-bucket' ? undefined : 0);
      await expectVotes(dir, expected);

      // A write open settles the split for good, and voting goes on.
      const store = await openStore(dir);
      stores.push(store);
      expect(readVoteSplit(dir).pending).toBeUndefined();
      await store.counters.vote('article-5', 'after-the-crash', 'dislike');
      expected.get('article-5')!.set('after-the-crash', 'dislike');
      await store.close();
      stores.pop();
      expect(voteBucketCount(readVoteSplit(dir))).toBe(1025);
      await expectVotes(dir, expected);
    },
  );

  it('a migration or a generator writes as many buckets as the votes fill', () => {
    expect(voteSplitFor(0)).toEqual({ level: 10, next: 0 });
    expect(voteBucketCount(voteSplitFor(1_000_000))).toBe(Math.ceil(1_000_000 / VOTES_PER_BUCKET));
    expect(voteSplitFor(1_000_000)).toEqual({ level: 12, next: 3717 });
  });
});
