/** The shapes of the views and adjustment bucket files, and of the layout-1 counters and votes files that the migration reads. */
import type { VoteKind } from '../../schemas/article.ts';

/** Views of the articles in one bucket (layout 2: views/<bucket>.json): a page view rewrites one small file. */
export type ViewsBucket = Record<string, number>;

/** An editor's adjustments of an article's tallies (vote-adjustments/<bucket>.json), added to the counted votes. */
export type AdjustmentBucket = Record<string, { likes: number; dislikes: number }>;

/** The layout-1 files (read by the migration). */
export type CountersFile = { views: Record<string, number> };
export type VotesFile = {
  votes: Record<string, Record<string, VoteKind>>;
  tallies: Record<string, { likes: number; dislikes: number }>;
};
