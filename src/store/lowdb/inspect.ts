/** Reads a collection of a DATA_DIR (layout 2) back as the one document layout 1 kept, for tests, audits and support. */
import fs from 'node:fs';
import path from 'node:path';
import { readJsonFileSync } from './file.ts';
import { dropMovedVotes, parseVoteBucket } from './vote-bucket.ts';
import { BUCKETS, bucketFile, collectionFolder, listJsonFiles, readVoteSplit, voteBucketCount, type BucketedName } from './layout.ts';
import { versionFile } from './migrate.ts';

function buckets<T>(dir: string, name: BucketedName): T[] {
  const out: T[] = [];
  for (let b = 0; b < BUCKETS[name]; b++) {
    const data = readJsonFileSync<T>(bucketFile(dir, name, b));
    if (data !== undefined) out.push(data);
  }
  return out;
}

/**
 * The collection `name` as one document in its layout-1 shape (`{ articles: [...] }`, `{ votes, tallies }`,
 * `{ comments }` newest first, ...), read synchronously from the files on disk, not from a running store.
 */
export function readCollectionDocument(dataDir: string, name: string): unknown {
  const dir = path.resolve(dataDir);
  switch (name) {
    case 'articles': {
      const articles = listJsonFiles(collectionFolder(dir, 'articles')).map((file) => readJsonFileSync<Record<string, unknown>>(file)!);
      return { version: readJsonFileSync<{ version: number }>(versionFile(dir))?.version ?? 0, articles };
    }
    case 'votes': {
      const votes: Record<string, Record<string, string>> = {};
      const tallies: Record<string, { likes: number; dislikes: number }> = {};
      // Every bucket the split state counts; a split's old bucket still pending keeps only its own votes.
      const split = readVoteSplit(dir);
      const settled = { level: split.level, next: split.next };
      for (let b = 0; b < voteBucketCount(split); b++) {
        const file = bucketFile(dir, 'votes', b);
        if (!fs.existsSync(file)) continue;
        // Read and parsed as the store does, so a pending split's old bucket is settled by the store's own rule.
        const parsed = parseVoteBucket(fs.readFileSync(file));
        if (b === split.pending) dropMovedVotes(parsed, b, settled);
        const bucket = { votes: parsed.votes.toJSON(), counts: parsed.counts.toJSON() };
        for (const [id, byVisitor] of Object.entries(bucket.votes)) Object.assign((votes[id] ??= {}), byVisitor);
        for (const [id, count] of Object.entries(bucket.counts)) {
          const tally = (tallies[id] ??= { likes: 0, dislikes: 0 });
          tally.likes += count.likes;
          tally.dislikes += count.dislikes;
        }
      }
      for (const bucket of buckets<Record<string, { likes: number; dislikes: number }>>(dir, 'voteAdjustments')) {
        for (const [id, adjustment] of Object.entries(bucket)) {
          const tally = (tallies[id] ??= { likes: 0, dislikes: 0 });
          tally.likes = Math.max(0, tally.likes + adjustment.likes);
          tally.dislikes = Math.max(0, tally.dislikes + adjustment.dislikes);
        }
      }
      for (const [id, tally] of Object.entries(tallies)) if (!tally.likes && !tally.dislikes && !votes[id]) delete tallies[id];
      return { votes, tallies };
    }
    case 'counters':
      return { views: Object.assign({}, ...buckets<Record<string, number>>(dir, 'views')) };
    case 'comments': {
      const comments = buckets<Record<string, { createdAt: string; id: string }>>(dir, 'comments').flatMap((b) => Object.values(b));
      comments.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : -1));
      return { comments };
    }
    case 'subscribers':
      return { subscribers: buckets<Record<string, unknown>>(dir, 'subscribers').flatMap((b) => Object.values(b)) };
    case 'sessions':
      return { sessions: Object.assign({}, ...buckets<Record<string, unknown>>(dir, 'sessions')) };
    case 'members':
      return { members: buckets<Record<string, unknown>>(dir, 'members').flatMap((b) => Object.values(b)) };
    case 'jobs': {
      const entries = buckets<Record<string, { job: { id: string }; order: number }>>(dir, 'jobs').flatMap((b) => Object.values(b));
      entries.sort((a, b) => a.order - b.order);
      return { jobs: entries.map((e) => e.job), seq: Math.max(0, ...entries.map((e) => Math.max(e.order, Number(e.job.id) || 0))) };
    }
    default:
      return readJsonFileSync(path.join(dir, `${name}.json`));
  }
}

/** Writes nothing; answers every JSON file of the store (layout 2), for checks that each one parses. */
export function storeJsonFiles(dataDir: string): string[] {
  return listJsonFiles(path.resolve(dataDir)).filter((f) => !f.includes(`${path.sep}images${path.sep}`));
}
