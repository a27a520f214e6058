/** Opens the vote buckets and counts their tallies, and writes the state of their split (with a test hook that pauses one). */
import fs from 'node:fs';
import { bucketFile, readVoteSplit, voteBucketCount, voteSplitFile, LazyBucketSet, type VoteSplit } from './layout.ts';
import { writeFileAtomic } from './file.ts';
import {
  dropMovedVotes,
  emptyVoteBucket,
  parseVoteBucket,
  parseVoteCounts,
  stringifyVoteBucket,
  type VoteBucket,
  type VoteCounts,
} from './vote-bucket.ts';

/**
 * Vote buckets kept in memory once no vote is using them: none. A bucket in use stays (pinned) for
 * every vote that reaches it meanwhile. Votes from new visitors land on any of the thousands of
 * buckets (7,813 at 1,000,000 votes), so an LRU of 256 hit 3% of them, while each bucket it held
 * outlived a young-generation collection or two and was promoted: a third of what a burst promoted
 * into the old generation, which the full collections then had to mark. Reading the small file again
 * (page cache) costs less.
 */
export const VOTE_BUCKET_CACHE = 0;

/** Counted votes per article: the sum of the counts stored in its vote buckets. */
export type VoteTallies = Map<string, { likes: number; dislikes: number }>;

/** The vote buckets, how far they have split, and the tallies built from their counts (once, on the first call). */
export type VoteStore = {
  dir: string;
  readOnly: boolean;
  buckets: LazyBucketSet<VoteBucket>;
  split: VoteSplit;
  counted: () => Promise<VoteTallies>;
};

/** A test hook: MERIDIAN_VOTE_SPLIT_PAUSE=new-bucket | state | old-bucket holds a split after that write (so a test can SIGKILL it). */
export async function pauseIf(point: string): Promise<void> {
  if (process.env.MERIDIAN_VOTE_SPLIT_PAUSE !== point) return;
  console.log(`[store] vote split paused at ${point}`);
  await new Promise(() => {});
}

/** Writes the split state (temp + rename). */
export async function writeVoteSplit(dir: string, split: VoteSplit): Promise<void> {
  await writeFileAtomic(voteSplitFile(dir), JSON.stringify(split));
}

/**
 * Opens the vote buckets. A split that a crash interrupted is finished first: its old bucket loses the
 * votes it had already handed to the new one, so they are not counted twice. The tallies are read from
 * every bucket's counts (their votes stay on disk until a vote needs them): at open for a writer, whose
 * first vote needs them; on the first call for a read snapshot, which a build opens and never asks for
 * a tally (a million votes are about 5,000 files and a second to read: docs/performance.md, 2026-11-29).
 */
export async function openVoteStore(dir: string, readOnly: boolean): Promise<VoteStore> {
  let split = readVoteSplit(dir);
  const pending = split.pending;
  let pendingCounts: VoteCounts | undefined;
  if (pending !== undefined) {
    const file = bucketFile(dir, 'votes', pending);
    const bytes = await fs.promises.readFile(file).catch(() => undefined);
    const bucket = bytes ? parseVoteBucket(bytes) : emptyVoteBucket();
    const settled = { level: split.level, next: split.next };
    dropMovedVotes(bucket, pending, settled);
    pendingCounts = bucket.counts.toJSON();
    if (!readOnly) {
      await writeFileAtomic(file, stringifyVoteBucket(bucket));
      await writeVoteSplit(dir, settled);
    }
    split = settled;
  }
  const buckets = LazyBucketSet.create<VoteBucket>(dir, 'votes', {
    empty: emptyVoteBucket,
    parse: parseVoteBucket,
    stringify: stringifyVoteBucket,
    cacheSize: VOTE_BUCKET_CACHE,
    readOnly,
  });
  const count = async (): Promise<VoteTallies> => {
    const counted: VoteTallies = new Map();
    const add = (counts: VoteCounts) => {
      for (const [articleId, tally] of Object.entries(counts)) {
        let total = counted.get(articleId);
        if (!total) counted.set(articleId, (total = { likes: 0, dislikes: 0 }));
        total.likes += tally.likes;
        total.dislikes += tally.dislikes;
      }
    };
    await buckets.readHeads(parseVoteCounts, voteBucketCount(split), (bucket, counts) => {
      if (bucket !== pending) add(counts);
    });
    if (pendingCounts) add(pendingCounts);
    return counted;
  };
  let counting: Promise<VoteTallies> | undefined;
  const counted = () => (counting ??= count());
  if (!readOnly) await counted();
  return { dir, readOnly, buckets, split, counted };
}
