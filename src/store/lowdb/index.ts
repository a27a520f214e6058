/** The lowdb store: one JSON file per collection under DATA_DIR, guarded by a lock file. */
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Store, StoreMode } from '../types.ts';
import { JsonCollection } from './file.ts';
import { acquireLock } from './lock.ts';
import { LowdbArticles, type ArticlesFile } from './articles.ts';
import {
  LowdbComments,
  LowdbCounters,
  LowdbJobs,
  LowdbMeta,
  LowdbSessions,
  LowdbSources,
  LowdbUsers,
  MemoryLimits,
  type CommentsFile,
  type CountersFile,
  type JobsFile,
  type MetaFile,
  type SessionsFile,
  type SourcesFile,
  type UsersFile,
  type VotesFile,
} from './collections.ts';
import { LowdbSubscriberList, type SubscribersFile } from './subscribers.ts';
import { LowdbBriefings, type BriefingsFile } from './briefings.ts';
import { LowdbRevisions } from './revisions.ts';
import { LowdbTrash } from './trash.ts';

/** Opens the store in DATA_DIR. `write` takes the lock; `read` is a snapshot for builds and reports. */
export async function openLowdbStore(dataDir: string, mode: StoreMode = 'write'): Promise<Store> {
  const dir = path.resolve(dataDir);
  fs.mkdirSync(dir, { recursive: true });
  const release = mode === 'write' ? acquireLock(dir) : () => {};
  const readOnly = mode === 'read';
  try {
    const open = <T>(name: string, defaults: T) => JsonCollection.open<T>(path.join(dir, `${name}.json`), defaults, readOnly);
    const [articles, counters, votes, comments, sources, subscribers, users, sessions, jobs, meta, briefings] = await Promise.all([
      open<ArticlesFile>('articles', { version: 0, articles: [] }),
      open<CountersFile>('counters', { views: {} }),
      open<VotesFile>('votes', { votes: {}, tallies: {} }),
      open<CommentsFile>('comments', { comments: [] }),
      open<SourcesFile>('sources', { sources: [] }),
      open<SubscribersFile>('subscribers', { subscribers: [] }),
      open<UsersFile>('users', { users: [] }),
      open<SessionsFile>('sessions', { sessions: {} }),
      open<JobsFile>('jobs', { jobs: [], seq: 0 }),
      open<MetaFile>('meta', {}),
      open<BriefingsFile>('briefings', { runs: [] }),
    ]);
    if (!readOnly && typeof meta.data.storeId !== 'string') {
      meta.data.storeId = randomUUID();
      await meta.write();
    }
    const trash = await LowdbTrash.open(dir, readOnly);
    const files = [articles, counters, votes, comments, sources, subscribers, users, sessions, jobs, meta, briefings];
    return {
      id: typeof meta.data.storeId === 'string' ? meta.data.storeId : 'unseeded',
      articles: new LowdbArticles(articles),
      counters: new LowdbCounters(counters, votes),
      comments: new LowdbComments(comments),
      sources: new LowdbSources(sources),
      subscribers: new LowdbSubscriberList(subscribers),
      briefings: new LowdbBriefings(briefings, dir, readOnly),
      users: new LowdbUsers(users),
      sessions: new LowdbSessions(sessions),
      jobs: new LowdbJobs(jobs),
      limits: new MemoryLimits(),
      meta: new LowdbMeta(meta),
      revisions: new LowdbRevisions(dir, readOnly),
      trash,
      async close() {
        // A no-op write per file waits for any write still in flight (steno queues behind it).
        if (!readOnly) await Promise.all(files.map((f) => f.write()));
        release();
      },
    };
  } catch (error) {
    release();
    throw error;
  }
}
