/** The vote bucket files: how one is read and written, and how votes move between buckets when one splits. */
import type { VoteKind } from '../../schemas/article.ts';
import { voteBucket, type VoteSplit } from './layout.ts';
import { LazyEntries, splitMembers } from './lazy-entries.ts';

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
export type VoteCounts = Record<string, { likes: number; dislikes: number }>;

const COUNTS_START = Buffer.from('{"counts":');
const VOTES_KEY = Buffer.from(',"votes":');

/**
 * Where the top-level `,"votes":` of a counts-first bucket file begins (each candidate in turn), so
 * the counts can be read without decoding the visitor ids (most of a file's bytes: docs/performance.md, 2026-11-23).
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

export const emptyVoteBucket = (): VoteBucket => ({ counts: LazyEntries.empty(), votes: LazyEntries.empty() });

/** Recounts a bucket's counts from its votes (after votes were moved out of it or into it). */
export function recount(bucket: VoteBucket, articleIds: Iterable<string>): void {
  for (const articleId of articleIds) {
    const votes = bucket.votes.get(articleId);
    const kinds = votes ? Object.values(votes) : [];
    if (kinds.length === 0) {
      bucket.votes.delete(articleId);
      bucket.counts.delete(articleId);
      continue;
    }
    const count = bucket.counts.ensure(articleId, () => ({ likes: 0, dislikes: 0 }));
    count.likes = kinds.filter((kind) => kind === 'like').length;
    count.dislikes = kinds.length - count.likes;
  }
}

/** Takes out of `bucket` the votes for which `moves` holds, into a bucket of their own. */
export function takeVotes(bucket: VoteBucket, moves: (articleId: string, visitorId: string) => boolean): VoteBucket {
  const taken = emptyVoteBucket();
  const touched: string[] = [];
  for (const articleId of bucket.votes.keys()) {
    const votes = bucket.votes.get(articleId)!;
    for (const [visitorId, kind] of Object.entries(votes)) {
      if (!moves(articleId, visitorId)) continue;
      taken.votes.ensure(articleId, () => ({}))[visitorId] = kind;
      delete votes[visitorId];
      touched.push(articleId);
    }
  }
  recount(bucket, new Set(touched));
  recount(taken, new Set(touched));
  return taken;
}

/**
 * The old bucket of a split a crash interrupted (`split.pending`) may still hold the votes it had
 * handed to the new one: drops every vote that `split` addresses elsewhere, and recounts.
 */
export function dropMovedVotes(bucket: VoteBucket, index: number, split: VoteSplit): void {
  takeVotes(bucket, (articleId, visitorId) => voteBucket(articleId, visitorId, split) !== index);
}
