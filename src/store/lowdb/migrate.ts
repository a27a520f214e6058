/**
 * Moves a DATA_DIR from layout 1 (one JSON file per collection) to layout 2 (one file per article,
 * hashed buckets) at start. Provable by construction: the layout-1 files are only read until
 * store.json is written, and that single atomic rename is the commit point. Before it, a crash
 * leaves partial layout-2 files that the next start deletes and writes again from the untouched
 * layout-1 files; after it, the next start only finishes moving the layout-1 files aside.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { ArticleRecord } from '../../schemas/article.ts';
import { readJsonFile, writeFileAtomic } from './file.ts';
import {
  BUCKETS,
  LAYOUT_FILE,
  LAYOUT_VERSION,
  articleFile,
  bucketFile,
  bucketOf,
  collectionFolder,
  inPool,
  voteBucket,
  voteBucketCount,
  voteSplitFile,
  voteSplitFor,
  type BucketedName,
} from './layout.ts';
import type { ArticlesFile } from './articles.ts';
import type { CommentsFile } from './comments.ts';
import type { CountersFile, VotesFile } from './counter-files.ts';
import type { JobsFile } from './jobs.ts';
import type { SessionsFile } from './sessions.ts';
import type { SubscribersFile } from './subscribers.ts';

/** The layout-1 files that layout 2 replaces (users, sources and meta keep their one file in both). */
export const LEGACY_FILES = ['articles', 'counters', 'votes', 'comments', 'subscribers', 'sessions', 'jobs'] as const;
/** Where the layout-1 files are kept once the migration is complete. */
export const LEGACY_FOLDER = 'layout-1';
const VERSION_FILE = 'articles-version.json';

export type LayoutMarker = { layout: number; migratedAt?: string };

/** A test hook: MERIDIAN_MIGRATION_PAUSE=articles:N | commit pauses the migration there (so a test can SIGKILL it). */
async function pauseIf(point: string): Promise<void> {
  if (process.env.MERIDIAN_MIGRATION_PAUSE !== point) return;
  console.log(`[store] migration paused at ${point}`);
  await new Promise(() => {});
}

function legacyPresent(dir: string): string[] {
  return LEGACY_FILES.filter((name) => fs.existsSync(path.join(dir, `${name}.json`)));
}

export function versionFile(dir: string): string {
  return path.join(dir, VERSION_FILE);
}

/** What state the folder is in: 'current' (layout 2), 'fresh' (nothing yet), 'legacy' (needs a migration). */
export function layoutState(dir: string): 'current' | 'fresh' | 'legacy' {
  const markerFile = path.join(dir, LAYOUT_FILE);
  if (fs.existsSync(markerFile)) {
    const marker = JSON.parse(fs.readFileSync(markerFile, 'utf8')) as LayoutMarker;
    if (marker.layout !== LAYOUT_VERSION)
      throw new Error(`${markerFile} names layout ${marker.layout}; this version reads layout ${LAYOUT_VERSION}`);
    return 'current';
  }
  return legacyPresent(dir).length ? 'legacy' : 'fresh';
}

/** Marks a new, empty folder as layout 2 (before anything is written into it). */
export async function markFresh(dir: string): Promise<void> {
  await writeFileAtomic(path.join(dir, LAYOUT_FILE), JSON.stringify({ layout: LAYOUT_VERSION } satisfies LayoutMarker));
}

/** Moves the layout-1 files left behind by a completed migration into layout-1/ (idempotent). */
export async function moveLegacyAside(dir: string): Promise<void> {
  const present = legacyPresent(dir);
  if (!present.length) return;
  const aside = path.join(dir, LEGACY_FOLDER);
  await fsp.mkdir(aside, { recursive: true });
  for (const name of present) {
    await fsp.rename(path.join(dir, `${name}.json`), path.join(aside, `${name}.json`));
    await pauseIf(`aside:${name}`);
  }
}

async function fsyncDir(dir: string): Promise<void> {
  const handle = await fsp.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Writes a bucketed collection: records grouped by bucket, one atomic file per bucket. */
async function writeBuckets<T>(dir: string, name: BucketedName, buckets: Map<number, T>): Promise<void> {
  await inPool([...buckets.keys()], 32, (b) => writeFileAtomic(bucketFile(dir, name, b), JSON.stringify(buckets.get(b))));
}

function group<T>(entries: Iterable<[number, string, T]>): Map<number, Record<string, T>> {
  const out = new Map<number, Record<string, T>>();
  for (const [bucket, key, value] of entries) {
    let record = out.get(bucket);
    if (!record) out.set(bucket, (record = {}));
    record[key] = value;
  }
  return out;
}

/** Runs the migration from the layout-1 files in `dir`; answers how many records of each kind it carried. */
export async function migrateLegacy(
  dir: string,
  log: (line: string) => void = (line) => console.log(line),
): Promise<Record<string, number>> {
  const started = performance.now();
  // Leftovers of a migration that did not reach its commit point: written again below from the untouched sources.
  for (const name of ['articles', ...Object.keys(BUCKETS)] as const)
    await fsp.rm(collectionFolder(dir, name as BucketedName), { recursive: true, force: true });
  await fsp.rm(versionFile(dir), { force: true });

  const read = async <T>(name: string, empty: T) => (await readJsonFile<T>(path.join(dir, `${name}.json`))) ?? empty;
  const articles = await read<ArticlesFile>('articles', { version: 0, articles: [] });
  const counters = await read<CountersFile>('counters', { views: {} });
  const votes = await read<VotesFile>('votes', { votes: {}, tallies: {} });
  const comments = await read<CommentsFile>('comments', { comments: [] });
  const subscribers = await read<SubscribersFile>('subscribers', { subscribers: [] });
  const sessions = await read<SessionsFile>('sessions', { sessions: {} });
  const jobs = await read<JobsFile>('jobs', { jobs: [], seq: 0 });
  log(`[store] migrating ${dir} to layout ${LAYOUT_VERSION}: ${articles.articles.length} articles`);

  let written = 0;
  await inPool(articles.articles, 32, async (article: ArticleRecord) => {
    await writeFileAtomic(articleFile(dir, article.id), JSON.stringify(article));
    written++;
    await pauseIf(`articles:${written}`);
  });
  await writeFileAtomic(versionFile(dir), JSON.stringify({ version: articles.version }));

  // Votes into their buckets, each bucket carrying the counts of exactly its votes.
  const voteBuckets = new Map<
    number,
    { votes: Record<string, Record<string, string>>; counts: Record<string, { likes: number; dislikes: number }> }
  >();
  const counted = new Map<string, { likes: number; dislikes: number }>();
  let voteCount = 0;
  // As many buckets as the votes fill (the store splits them further as votes come in).
  const split = voteSplitFor(Object.values(votes.votes).reduce((n, byVisitor) => n + Object.keys(byVisitor).length, 0));
  for (const [articleId, byVisitor] of Object.entries(votes.votes)) {
    for (const [visitorId, kind] of Object.entries(byVisitor)) {
      const b = voteBucket(articleId, visitorId, split);
      let bucket = voteBuckets.get(b);
      if (!bucket) voteBuckets.set(b, (bucket = { votes: {}, counts: {} }));
      (bucket.votes[articleId] ??= {})[visitorId] = kind;
      const count = (bucket.counts[articleId] ??= { likes: 0, dislikes: 0 });
      let total = counted.get(articleId);
      if (!total) counted.set(articleId, (total = { likes: 0, dislikes: 0 }));
      for (const tally of [count, total]) {
        if (kind === 'like') tally.likes++;
        else tally.dislikes++;
      }
      voteCount++;
    }
  }
  await writeBuckets(dir, 'votes', voteBuckets);
  if (voteBucketCount(split) > BUCKETS.votes) await writeFileAtomic(voteSplitFile(dir), JSON.stringify(split));
  await pauseIf('votes');
  // A stored tally that differs from its counted votes was adjusted by an editor: keep the difference.
  const adjustments = group(
    Object.entries(votes.tallies).flatMap(([id, tally]) => {
      const c = counted.get(id) ?? { likes: 0, dislikes: 0 };
      const adjustment = { likes: tally.likes - c.likes, dislikes: tally.dislikes - c.dislikes };
      return adjustment.likes || adjustment.dislikes
        ? [[bucketOf('voteAdjustments', id), id, adjustment] as [number, string, typeof adjustment]]
        : [];
    }),
  );
  await writeBuckets(dir, 'voteAdjustments', adjustments);
  await writeBuckets(dir, 'views', group(Object.entries(counters.views).map(([id, n]) => [bucketOf('views', id), id, n])));
  await writeBuckets(dir, 'comments', group(comments.comments.map((c) => [bucketOf('comments', c.id), c.id, c])));
  await writeBuckets(dir, 'subscribers', group(subscribers.subscribers.map((s) => [bucketOf('subscribers', s.email), s.email, s])));
  await writeBuckets(dir, 'sessions', group(Object.values(sessions.sessions).map((s) => [bucketOf('sessions', s.id), s.id, s])));
  // Queue order is kept as `order`; seq carries on past the highest id.
  await writeBuckets(
    dir,
    'jobs',
    group(jobs.jobs.map((job, i) => [bucketOf('jobs', job.path), job.path, { job, order: Math.max(jobs.seq, jobs.jobs.length) + i + 1 }])),
  );
  await pauseIf('commit');

  // Commit point: every layout-2 file above is on disk (each fsynced) before the marker exists.
  await fsyncDir(dir);
  await writeFileAtomic(
    path.join(dir, LAYOUT_FILE),
    JSON.stringify({ layout: LAYOUT_VERSION, migratedAt: new Date().toISOString() } satisfies LayoutMarker),
  );
  await fsyncDir(dir);
  await moveLegacyAside(dir);
  const carried = {
    articles: articles.articles.length,
    votes: voteCount,
    comments: comments.comments.length,
    subscribers: subscribers.subscribers.length,
    sessions: Object.keys(sessions.sessions).length,
    jobs: jobs.jobs.length,
  };
  log(
    `[store] migrated in ${((performance.now() - started) / 1000).toFixed(1)} s: ${JSON.stringify(carried)}; the old files are in ${path.join(dir, LEGACY_FOLDER)}`,
  );
  return carried;
}
