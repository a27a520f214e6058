/** Views, votes and editors' adjustments of articles, in hashed buckets, with the tallies kept in memory. */
import type { ArticleCounters, VoteKind } from '../../schemas/article.ts';
import { PartlyStoredError, type CounterRepository, type StoreLog, type VoteRecord } from '../types.ts';
import {
  bucketOf,
  inPool,
  voteBucket,
  voteBucketAfterSplit,
  voteBucketCount,
  voteBucketsOf,
  voteSplitFor,
  VOTES_PER_BUCKET,
  type BucketSet,
  type LazyBucketSet,
  type VoteSplit,
} from './layout.ts';
import type { AdjustmentBucket, ViewsBucket } from './counter-files.ts';
import { dropMovedVotes, recount, takeVotes, type VoteBucket } from './vote-bucket.ts';
import { pauseIf, writeVoteSplit, type VoteStore, type VoteTallies } from './vote-store.ts';

/**
 * Tallies live in memory as the sum over an article's vote buckets plus its adjustment, built
 * from the counts stored beside the votes (openVoteStore says when); the votes themselves are read per bucket when a
 * vote needs them, and each vote rewrites one bucket of about VOTES_PER_BUCKET votes.
 */
export class LowdbCounters implements CounterRepository {
  readonly #views: BucketSet<ViewsBucket>;
  readonly #votes: LazyBucketSet<VoteBucket>;
  readonly #adjustments: BucketSet<AdjustmentBucket>;
  /** Counted votes per article (adjustments not included), once read (#tallies). */
  #counted: VoteTallies | undefined;
  readonly #count: () => Promise<VoteTallies>;
  readonly #dir: string;
  readonly #readOnly: boolean;
  #split: VoteSplit;
  /** Votes stored in all buckets (what the split keeps per bucket). */
  #stored = 0;
  /** Vote work running (reads and writes of buckets); a split waits for it and holds new work back. */
  #active = 0;
  #drained: (() => void) | undefined;
  /** The splits running, while they run. */
  #splitting: Promise<void> | undefined;
  /** A split's old bucket whose rewrite failed: rewritten before any other split names another one pending. */
  #unsettled: number | undefined;

  readonly #log: StoreLog;

  constructor(views: BucketSet<ViewsBucket>, votes: VoteStore, adjustments: BucketSet<AdjustmentBucket>, log: StoreLog) {
    this.#log = log;
    this.#views = views;
    this.#votes = votes.buckets;
    this.#adjustments = adjustments;
    this.#count = votes.counted;
    this.#dir = votes.dir;
    this.#readOnly = votes.readOnly;
    this.#split = votes.split;
  }

  /** The counted votes, read from the buckets' counts on the first call; every use of #counted or #stored comes after it. */
  async #tallies(): Promise<VoteTallies> {
    if (this.#counted) return this.#counted;
    const counted = await this.#count();
    if (!this.#counted) {
      this.#counted = counted;
      for (const count of counted.values()) this.#stored += count.likes + count.dislikes;
    }
    return this.#counted;
  }

  /** Runs vote work on the buckets as they are now: never while a split moves votes between them. */
  async #onBuckets<R>(task: (split: VoteSplit) => Promise<R>): Promise<R> {
    while (this.#splitting) await this.#splitting;
    this.#active++;
    try {
      return await task(this.#split);
    } finally {
      if (--this.#active === 0) this.#drained?.();
    }
  }

  /**
   * Splits a bucket when the votes pass VOTES_PER_BUCKET per bucket; vote work waits meanwhile. One
   * split per vote: a folder that is far behind (votes written by an older version) catches up over
   * the next votes instead of holding them all back for thousands of splits.
   */
  #splitIfFull(): void {
    if (this.#splitting || this.#readOnly || !this.#full()) return;
    this.#splitting = (async () => {
      if (this.#active > 0) await new Promise<void>((resolve) => (this.#drained = resolve));
      this.#drained = undefined;
      await this.#splitOne();
    })()
      .catch((error: unknown) => this.#log.error(`[store] splitting a vote bucket failed (the next vote tries again): ${String(error)}`))
      .finally(() => (this.#splitting = undefined));
  }

  #full(): boolean {
    return this.#split.level < 30 && this.#stored > VOTES_PER_BUCKET * voteBucketCount(this.#split);
  }

  /**
   * One step of linear hashing: bucket `next` hands the votes that the next level addresses to
   * bucket next + 2^level. The writes go in an order a crash cannot break: the new bucket, then the
   * state naming the old one pending (from here lookups go to the new bucket), then the old bucket
   * without the moved votes, then the state without pending. Only the old bucket can then hold votes
   * twice, and the next open removes them (openVoteStore).
   */
  async #splitOne(): Promise<void> {
    if (this.#unsettled !== undefined) {
      const unsettled = this.#unsettled;
      // Its failed write left it as its file has it, still holding the votes the split moved on.
      await this.#votes.use(unsettled, (bucket, write) => {
        dropMovedVotes(bucket, unsettled, this.#split);
        return write();
      });
      await writeVoteSplit(this.#dir, this.#split);
      this.#unsettled = undefined;
    }
    const split = this.#split;
    const from = split.next;
    const to = from + 2 ** split.level;
    const after: VoteSplit = from + 1 === 2 ** split.level ? { level: split.level + 1, next: 0 } : { level: split.level, next: from + 1 };
    await this.#votes.use(from, async (bucket, write) => {
      const moved = takeVotes(bucket, (articleId, visitorId) => voteBucketAfterSplit(articleId, visitorId, split) === to);
      try {
        await this.#votes.adopt(to, moved);
        await pauseIf('new-bucket');
        await writeVoteSplit(this.#dir, { ...after, pending: from });
        await pauseIf('state');
      } catch (error) {
        // Not switched over: the moved votes go back where lookups still find them.
        for (const articleId of moved.votes.keys())
          Object.assign(
            bucket.votes.ensure(articleId, () => ({})),
            moved.votes.get(articleId),
          );
        recount(bucket, moved.votes.keys());
        throw error;
      }
      this.#split = after;
      this.#unsettled = from;
      await write();
      await pauseIf('old-bucket');
      await writeVoteSplit(this.#dir, after);
      this.#unsettled = undefined;
    });
  }

  #countedOf(tallies: VoteTallies, articleId: string): { likes: number; dislikes: number } {
    let total = tallies.get(articleId);
    if (!total) tallies.set(articleId, (total = { likes: 0, dislikes: 0 }));
    return total;
  }

  #read(tallies: VoteTallies, articleId: string): ArticleCounters {
    const counted = tallies.get(articleId);
    const adjustment = this.#adjustments.get(bucketOf('voteAdjustments', articleId))[articleId];
    return {
      likes: Math.max(0, (counted?.likes ?? 0) + (adjustment?.likes ?? 0)),
      dislikes: Math.max(0, (counted?.dislikes ?? 0) + (adjustment?.dislikes ?? 0)),
      views: this.#views.get(bucketOf('views', articleId))[articleId] ?? 0,
    };
  }

  async get(articleId: string) {
    return this.#read(await this.#tallies(), articleId);
  }

  async getMany(articleIds: readonly string[]) {
    const tallies = await this.#tallies();
    const out = new Map<string, ArticleCounters>();
    for (const id of articleIds) out.set(id, this.#read(tallies, id));
    return out;
  }

  async visitorVote(articleId: string, visitorId: string) {
    return this.#onBuckets((split) =>
      this.#votes.use(voteBucket(articleId, visitorId, split), (bucket) => bucket.votes.get(articleId)?.[visitorId]),
    );
  }

  async vote(articleId: string, visitorId: string, kind: VoteKind) {
    const tallies = await this.#tallies();
    await this.#onBuckets((split) =>
      this.#votes.use(voteBucket(articleId, visitorId, split), async (bucket, write) => {
        // Changed synchronously below: the write folds decoded entries back into text.
        const votes = bucket.votes.ensure(articleId, () => ({}));
        const previous = votes[visitorId];
        if (previous === kind) return;
        const count = bucket.counts.ensure(articleId, () => ({ likes: 0, dislikes: 0 }));
        const total = this.#countedOf(tallies, articleId);
        votes[visitorId] = kind;
        if (previous === undefined) this.#stored++;
        for (const tally of [count, total]) {
          if (previous === 'like') tally.likes--;
          if (previous === 'dislike') tally.dislikes--;
          if (kind === 'like') tally.likes++;
          else tally.dislikes++;
        }
        try {
          await write();
        } catch (error) {
          // Not stored (a full disk): the bucket went back to its file, and the tally kept beside it goes back too.
          if (kind === 'like') total.likes--;
          else total.dislikes--;
          if (previous === 'like') total.likes++;
          if (previous === 'dislike') total.dislikes++;
          if (previous === undefined) this.#stored--;
          throw error;
        }
      }),
    );
    // After this vote is answered for: the split runs on its own, and the votes behind it wait.
    this.#splitIfFull();
    return { ...this.#read(tallies, articleId), vote: kind };
  }

  /**
   * Many votes at once: each bucket's votes applied as vote() applies one, with one write per bucket.
   * Into a store without votes the split is first set to what their number needs (no vote has to
   * move for that), so a large load is not followed by thousands of splits; into one with votes, the
   * split catches up afterwards, a bucket at a time as votes would.
   */
  async importVotes(votes: readonly VoteRecord[]) {
    if (this.#readOnly) throw new Error('The store was opened read-only');
    if (votes.length === 0) return;
    const tallies = await this.#tallies();
    await this.#growEmpty(voteSplitFor(this.#stored + votes.length));
    await this.#onBuckets(async (split) => {
      const byBucket = new Map<number, VoteRecord[]>();
      for (const vote of votes) {
        const b = voteBucket(vote.articleId, vote.visitorId, split);
        let list = byBucket.get(b);
        if (!list) byBucket.set(b, (list = []));
        list.push(vote);
      }
      await inPool([...byBucket.entries()], 16, ([b, list]) =>
        this.#votes.use(b, async (bucket, write) => {
          const delta = new Map<string, { likes: number; dislikes: number }>();
          let added = 0;
          for (const { articleId, visitorId, kind } of list) {
            const byVisitor = bucket.votes.ensure(articleId, () => ({}));
            const previous = byVisitor[visitorId];
            if (previous === kind) continue;
            const count = bucket.counts.ensure(articleId, () => ({ likes: 0, dislikes: 0 }));
            let change = delta.get(articleId);
            if (!change) delta.set(articleId, (change = { likes: 0, dislikes: 0 }));
            byVisitor[visitorId] = kind;
            if (previous === undefined) added++;
            for (const tally of [count, change]) {
              if (previous === 'like') tally.likes--;
              if (previous === 'dislike') tally.dislikes--;
              if (kind === 'like') tally.likes++;
              else tally.dislikes++;
            }
          }
          // A failed write reads the bucket back from its file; the tallies only count what was written.
          await write();
          for (const [articleId, change] of delta) {
            const total = this.#countedOf(tallies, articleId);
            total.likes += change.likes;
            total.dislikes += change.dislikes;
          }
          this.#stored += added;
        }),
      );
    });
    while (this.#full()) {
      const before = voteBucketCount(this.#split);
      this.#splitIfFull();
      await this.#splitting;
      if (voteBucketCount(this.#split) === before) throw new Error('Splitting the vote buckets failed after a bulk load of votes');
    }
  }

  /**
   * Sets the split to `target` when the store holds no vote at all (so none has to move) and the
   * target has more buckets; vote work waits meanwhile, as for a split.
   */
  async #growEmpty(target: VoteSplit): Promise<void> {
    while (this.#splitting) await this.#splitting;
    if (this.#stored > 0 || this.#unsettled !== undefined || voteBucketCount(target) <= voteBucketCount(this.#split)) return;
    this.#splitting = (async () => {
      if (this.#active > 0) await new Promise<void>((resolve) => (this.#drained = resolve));
      this.#drained = undefined;
      // Checked again: a vote may have landed while this waited.
      if (this.#stored > 0) return;
      await writeVoteSplit(this.#dir, target);
      this.#split = target;
    })().finally(() => (this.#splitting = undefined));
    await this.#splitting;
  }

  /** Moves a tally by `amount`, never below zero: the adjustment is what makes the shown total the wanted one. */
  async adjust(articleId: string, kind: VoteKind, amount: number) {
    const b = bucketOf('voteAdjustments', articleId);
    const tallies = await this.#tallies();
    const bucket = this.#adjustments.get(b);
    const shown = this.#read(tallies, articleId);
    const counted = tallies.get(articleId) ?? { likes: 0, dislikes: 0 };
    const adjustment = (bucket[articleId] ??= { likes: 0, dislikes: 0 });
    if (kind === 'like') adjustment.likes = Math.max(0, shown.likes + amount) - counted.likes;
    else adjustment.dislikes = Math.max(0, shown.dislikes + amount) - counted.dislikes;
    await this.#adjustments.write(b);
    return this.#read(tallies, articleId);
  }

  async addViews(views: ReadonlyMap<string, number>) {
    const touched = new Map<number, string[]>();
    for (const [articleId, count] of views) {
      const b = bucketOf('views', articleId);
      const bucket = this.#views.get(b);
      bucket[articleId] = (bucket[articleId] ?? 0) + count;
      const ids = touched.get(b);
      if (ids) ids.push(articleId);
      else touched.set(b, [articleId]);
    }
    const buckets = [...touched];
    const results = await Promise.allSettled(buckets.map(([b]) => this.#views.write(b)));
    // A bucket whose write failed went back to its file; the others are stored and must not be added twice.
    const unstored = new Map<string, number>();
    let cause: unknown;
    for (const [i, result] of results.entries()) {
      if (result.status === 'fulfilled') continue;
      cause ??= result.reason;
      for (const articleId of buckets[i]![1]) unstored.set(articleId, views.get(articleId)!);
    }
    if (unstored.size > 0) throw new PartlyStoredError(unstored, cause);
  }

  async incrementViews(articleId: string) {
    const b = bucketOf('views', articleId);
    const views = this.#views.get(b);
    views[articleId] = (views[articleId] ?? 0) + 1;
    await this.#views.write(b);
  }

  async deleteArticle(articleId: string) {
    const tallies = await this.#tallies();
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
    const counted = tallies.get(articleId);
    if (counted) this.#stored -= counted.likes + counted.dislikes;
    tallies.delete(articleId);
    // An article's votes are in its group's 16 of every 1,024 buckets (each read only if it is not in memory).
    writes.push(
      this.#onBuckets(async (split) => {
        const results = await Promise.allSettled(
          voteBucketsOf(articleId, split).map((b) =>
            this.#votes.use(b, async (bucket, write) => {
              if (!bucket.votes.has(articleId) && !bucket.counts.has(articleId)) return;
              bucket.votes.delete(articleId);
              bucket.counts.delete(articleId);
              await write();
            }),
          ),
        );
        const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
        if (!failed) return;
        // Some buckets kept the votes (a full disk): the tally counts what their files still hold.
        const total = { likes: 0, dislikes: 0 };
        for (const b of voteBucketsOf(articleId, split)) {
          const count = await this.#votes.use(b, (bucket) => bucket.counts.get(articleId));
          total.likes += count?.likes ?? 0;
          total.dislikes += count?.dislikes ?? 0;
        }
        if (total.likes + total.dislikes > 0) tallies.set(articleId, total);
        this.#stored += total.likes + total.dislikes;
        throw failed.reason;
      }),
    );
    await Promise.all(writes);
  }

  /** How far the vote buckets have split (for tests and probes). */
  get voteSplit(): VoteSplit {
    return this.#split;
  }

  async settle(): Promise<void> {
    while (this.#splitting) await this.#splitting;
    await Promise.all([this.#views.settle(), this.#votes.settle(), this.#adjustments.settle()]);
  }
}
