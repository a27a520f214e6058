/** Views, votes and editors' adjustments of articles, in hashed buckets, with the tallies kept in memory. */
import type { ArticleCounters, VoteKind } from '../../schemas/article.ts';
import type { CounterRepository } from '../types.ts';
import { bucketOf, voteBucket, voteBucketsOf, LazyBucketSet, type BucketSet } from './layout.ts';
import { LazyEntries, splitMembers } from './lazy-entries.ts';

/** Views of the articles in one bucket (layout 2: views/<bucket>.json): a page view rewrites one small file. */
export type ViewsBucket = Record<string, number>;
/**
 * One vote bucket (votes/<group>/<bucket>.json): the votes of the visitors that hash to it, for the
 * articles that hash to its group, and the like/dislike counts of exactly those votes. One write (one
 * rename) records a vote and its count together, so a crash can never leave the two disagreeing.
 * In memory both halves stay as each article's JSON text until a vote decodes that one article.
 */
export type VoteBucket = {
  counts: LazyEntries<{ likes: number; dislikes: number }>;
  votes: LazyEntries<Record<string, VoteKind>>;
};
type VoteCounts = Record<string, { likes: number; dislikes: number }>;

const COUNTS_START = Buffer.from('{"counts":');
const VOTES_KEY = Buffer.from(',"votes":');

/**
 * Where the top-level `,"votes":` of a counts-first bucket file begins (each candidate in turn), so
 * the counts can be read without decoding the visitor ids (~100 KB per file at 1,000,000 votes).
 * That byte run cannot occur inside a JSON string (its quotes would be escaped); one inside the counts
 * (an article id "votes") leaves an unbalanced cut that fails to parse, and the next is tried.
 */
function* votesCuts(bytes: Buffer): Generator<number> {
  if (!bytes.subarray(0, COUNTS_START.length).equals(COUNTS_START)) return;
  for (let cut = bytes.indexOf(VOTES_KEY); cut >= 0; cut = bytes.indexOf(VOTES_KEY, cut + 1)) yield cut;
}

/** The `counts` of a vote bucket file (read at open for every bucket); a file in another order is parsed whole. */
export function parseVoteCounts(bytes: Buffer): VoteCounts {
  for (const cut of votesCuts(bytes)) {
    try {
      return (JSON.parse(`${bytes.toString('utf8', 0, cut)}}`) as { counts: VoteCounts }).counts;
    } catch {
      // A `,"votes":` nested in the counts: try the next one.
    }
  }
  return parseVoteBucket(bytes).counts.toJSON();
}

/** A whole vote bucket file, split per article without decoding (decoded whole when it is in another form). */
export function parseVoteBucket(bytes: Buffer): VoteBucket {
  if (bytes[bytes.length - 1] === 0x7d) {
    for (const cut of votesCuts(bytes)) {
      const counts = splitMembers(bytes.toString('utf8', COUNTS_START.length, cut));
      const votes = counts && splitMembers(bytes.toString('utf8', cut + VOTES_KEY.length, bytes.length - 1));
      if (counts && votes) return { counts: LazyEntries.fromSplit(counts), votes: LazyEntries.fromSplit(votes) };
    }
  }
  const data = JSON.parse(bytes.toString('utf8')) as { counts?: VoteCounts; votes?: Record<string, Record<string, VoteKind>> };
  return { counts: LazyEntries.of(data.counts ?? {}), votes: LazyEntries.of(data.votes ?? {}) };
}

/** A vote bucket's file text, counts first (the order parseVoteCounts reads cheaply). */
export function stringifyVoteBucket(bucket: VoteBucket): string {
  return `{"counts":${bucket.counts.stringify()},"votes":${bucket.votes.stringify()}}`;
}

/**
 * Vote buckets kept in memory at once, of 1,024: at 1,000,000 votes a bucket holds ~1,000 visitor
 * ids (~30-100 KB of JSON, kept as per-article text), so 64 cost a few MB instead of ~400 MB, and
 * still cover the 16 buckets of a few articles being voted on at the same time.
 */
export const VOTE_BUCKET_CACHE = 64;

/** The vote buckets and the tallies built from their counts at open. */
export type VoteStore = { buckets: LazyBucketSet<VoteBucket>; counted: Map<string, { likes: number; dislikes: number }> };

/** Opens the vote buckets, reading only their counts (their votes stay on disk until a vote needs them). */
export async function openVoteStore(dir: string, readOnly: boolean): Promise<VoteStore> {
  const counted = new Map<string, { likes: number; dislikes: number }>();
  const buckets = await LazyBucketSet.open<VoteBucket, VoteCounts>(
    dir,
    'votes',
    {
      empty: () => ({ counts: LazyEntries.empty(), votes: LazyEntries.empty() }),
      parse: parseVoteBucket,
      stringify: stringifyVoteBucket,
      head: parseVoteCounts,
      cacheSize: VOTE_BUCKET_CACHE,
      readOnly,
    },
    (_bucket, counts) => {
      for (const [articleId, count] of Object.entries(counts)) {
        let total = counted.get(articleId);
        if (!total) counted.set(articleId, (total = { likes: 0, dislikes: 0 }));
        total.likes += count.likes;
        total.dislikes += count.dislikes;
      }
    },
  );
  return { buckets, counted };
}

/** An editor's adjustments of an article's tallies (vote-adjustments/<bucket>.json), added to the counted votes. */
export type AdjustmentBucket = Record<string, { likes: number; dislikes: number }>;

/** The layout-1 files (read by the migration). */
export type CountersFile = { views: Record<string, number> };
export type VotesFile = {
  votes: Record<string, Record<string, VoteKind>>;
  tallies: Record<string, { likes: number; dislikes: number }>;
};

/**
 * Tallies live in memory as the sum over an article's vote buckets plus its adjustment, built at
 * start from the counts stored beside the votes; the votes themselves are read per bucket when a
 * vote needs them, and each vote rewrites one bucket of ~1/1024 of all votes.
 */
export class LowdbCounters implements CounterRepository {
  readonly #views: BucketSet<ViewsBucket>;
  readonly #votes: LazyBucketSet<VoteBucket>;
  readonly #adjustments: BucketSet<AdjustmentBucket>;
  /** Counted votes per article (adjustments not included). */
  readonly #counted: Map<string, { likes: number; dislikes: number }>;

  constructor(views: BucketSet<ViewsBucket>, votes: VoteStore, adjustments: BucketSet<AdjustmentBucket>) {
    this.#views = views;
    this.#votes = votes.buckets;
    this.#adjustments = adjustments;
    this.#counted = votes.counted;
  }

  #countedOf(articleId: string): { likes: number; dislikes: number } {
    let total = this.#counted.get(articleId);
    if (!total) this.#counted.set(articleId, (total = { likes: 0, dislikes: 0 }));
    return total;
  }

  #read(articleId: string): ArticleCounters {
    const counted = this.#counted.get(articleId);
    const adjustment = this.#adjustments.get(bucketOf('voteAdjustments', articleId))[articleId];
    return {
      likes: Math.max(0, (counted?.likes ?? 0) + (adjustment?.likes ?? 0)),
      dislikes: Math.max(0, (counted?.dislikes ?? 0) + (adjustment?.dislikes ?? 0)),
      views: this.#views.get(bucketOf('views', articleId))[articleId] ?? 0,
    };
  }

  async get(articleId: string) {
    return this.#read(articleId);
  }

  async getMany(articleIds: readonly string[]) {
    const out = new Map<string, ArticleCounters>();
    for (const id of articleIds) out.set(id, this.#read(id));
    return out;
  }

  async visitorVote(articleId: string, visitorId: string) {
    return this.#votes.use(voteBucket(articleId, visitorId), (bucket) => bucket.votes.get(articleId)?.[visitorId]);
  }

  async vote(articleId: string, visitorId: string, kind: VoteKind) {
    await this.#votes.use(voteBucket(articleId, visitorId), async (bucket, write) => {
      // Changed synchronously below: the write folds decoded entries back into text.
      const votes = bucket.votes.ensure(articleId, () => ({}));
      const previous = votes[visitorId];
      if (previous === kind) return;
      const count = bucket.counts.ensure(articleId, () => ({ likes: 0, dislikes: 0 }));
      const total = this.#countedOf(articleId);
      votes[visitorId] = kind;
      for (const tally of [count, total]) {
        if (previous === 'like') tally.likes--;
        if (previous === 'dislike') tally.dislikes--;
        if (kind === 'like') tally.likes++;
        else tally.dislikes++;
      }
      await write();
    });
    return { ...this.#read(articleId), vote: kind };
  }

  /** Moves a tally by `amount`, never below zero: the adjustment is what makes the shown total the wanted one. */
  async adjust(articleId: string, kind: VoteKind, amount: number) {
    const b = bucketOf('voteAdjustments', articleId);
    const bucket = this.#adjustments.get(b);
    const shown = this.#read(articleId);
    const counted = this.#counted.get(articleId) ?? { likes: 0, dislikes: 0 };
    const adjustment = (bucket[articleId] ??= { likes: 0, dislikes: 0 });
    if (kind === 'like') adjustment.likes = Math.max(0, shown.likes + amount) - counted.likes;
    else adjustment.dislikes = Math.max(0, shown.dislikes + amount) - counted.dislikes;
    await this.#adjustments.write(b);
    return this.#read(articleId);
  }

  async incrementViews(articleId: string) {
    const b = bucketOf('views', articleId);
    const views = this.#views.get(b);
    views[articleId] = (views[articleId] ?? 0) + 1;
    await this.#views.write(b);
  }

  async deleteArticle(articleId: string) {
    const writes: Promise<void>[] = [];
    const viewBucket = bucketOf('views', articleId);
    if (articleId in this.#views.get(viewBucket)) {
      delete this.#views.get(viewBucket)[articleId];
      writes.push(this.#views.write(viewBucket));
    }
    const adjustmentBucket = bucketOf('voteAdjustments', articleId);
    if (articleId in this.#adjustments.get(adjustmentBucket)) {
      delete this.#adjustments.get(adjustmentBucket)[articleId];
      writes.push(this.#adjustments.write(adjustmentBucket));
    }
    this.#counted.delete(articleId);
    // An article's votes are in its group's 16 buckets at most (each read only if it is not in memory).
    for (const b of voteBucketsOf(articleId)) {
      writes.push(
        this.#votes.use(b, async (bucket, write) => {
          if (!bucket.votes.has(articleId) && !bucket.counts.has(articleId)) return;
          bucket.votes.delete(articleId);
          bucket.counts.delete(articleId);
          await write();
        }),
      );
    }
    await Promise.all(writes);
  }

  async settle(): Promise<void> {
    await Promise.all([this.#views.settle(), this.#votes.settle(), this.#adjustments.settle()]);
  }
}
