/** Views, votes and editors' adjustments of articles, in hashed buckets, with the tallies kept in memory. */
import type { ArticleCounters, VoteKind } from '../../schemas/article.ts';
import type { CounterRepository } from '../types.ts';
import { bucketOf, voteBucket, voteBucketsOf, type BucketSet } from './layout.ts';

/** Views of the articles in one bucket (layout 2: views/<bucket>.json): a page view rewrites one small file. */
export type ViewsBucket = Record<string, number>;
/**
 * One vote bucket (votes/<group>/<bucket>.json): the votes of the visitors that hash to it, for the
 * articles that hash to its group, and the like/dislike counts of exactly those votes. One write (one
 * rename) records a vote and its count together, so a crash can never leave the two disagreeing.
 */
export type VoteBucket = {
  votes: Record<string, Record<string, VoteKind>>;
  counts: Record<string, { likes: number; dislikes: number }>;
};
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
 * start from the counts stored beside the votes; each vote rewrites one bucket of ~1/1024 of all votes.
 */
export class LowdbCounters implements CounterRepository {
  readonly #views: BucketSet<ViewsBucket>;
  readonly #votes: BucketSet<VoteBucket>;
  readonly #adjustments: BucketSet<AdjustmentBucket>;
  /** Counted votes per article (adjustments not included). */
  readonly #counted = new Map<string, { likes: number; dislikes: number }>();

  constructor(views: BucketSet<ViewsBucket>, votes: BucketSet<VoteBucket>, adjustments: BucketSet<AdjustmentBucket>) {
    this.#views = views;
    this.#votes = votes;
    this.#adjustments = adjustments;
    for (const [, bucket] of votes.entries()) {
      for (const [articleId, count] of Object.entries(bucket.counts)) {
        const total = this.#countedOf(articleId);
        total.likes += count.likes;
        total.dislikes += count.dislikes;
      }
    }
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
    return this.#votes.get(voteBucket(articleId, visitorId)).votes[articleId]?.[visitorId];
  }

  async vote(articleId: string, visitorId: string, kind: VoteKind) {
    const b = voteBucket(articleId, visitorId);
    const bucket = this.#votes.get(b);
    const votes = (bucket.votes[articleId] ??= {});
    const previous = votes[visitorId];
    if (previous !== kind) {
      const count = (bucket.counts[articleId] ??= { likes: 0, dislikes: 0 });
      const total = this.#countedOf(articleId);
      votes[visitorId] = kind;
      for (const tally of [count, total]) {
        if (previous === 'like') tally.likes--;
        if (previous === 'dislike') tally.dislikes--;
        if (kind === 'like') tally.likes++;
        else tally.dislikes++;
      }
      await this.#votes.write(b);
    }
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
    // An article's votes are in its group's 16 buckets at most.
    for (const b of voteBucketsOf(articleId)) {
      const bucket = this.#votes.get(b);
      if (!(articleId in bucket.votes) && !(articleId in bucket.counts)) continue;
      delete bucket.votes[articleId];
      delete bucket.counts[articleId];
      writes.push(this.#votes.write(b));
    }
    this.#counted.delete(articleId);
    await Promise.all(writes);
  }

  async settle(): Promise<void> {
    await Promise.all([this.#views.settle(), this.#votes.settle(), this.#adjustments.settle()]);
  }
}
