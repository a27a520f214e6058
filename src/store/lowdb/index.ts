/** The lowdb store (layout 2): one file per article, hashed bucket files for the other growing collections, guarded by a lock file. */
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ArticleRecord } from '../../schemas/article.ts';
import type { Store, StoreLog, StoreMode } from '../types.ts';
import { JsonCollection } from './file.ts';
import { acquireLock } from '../lock-file.ts';
import { LowdbArticles, type ArticlesVersionFile } from './articles.ts';
import { ArticleBodies, parseArticleWithoutBody } from './article-bodies.ts';
import { BucketSet, LAYOUT_FILE, LAYOUT_VERSION, loadArticleFiles } from './layout.ts';
import { readListingSnapshot, removeListingSnapshot } from './listing-snapshot.ts';
import { layoutState, markFresh, migrateLegacy, moveLegacyAside, versionFile } from './migrate.ts';
import { MemoryLimits } from '../memory-limits.ts';
import { LowdbComments, type CommentBucket } from './comments.ts';
import { LowdbCounters } from './counters.ts';
import type { AdjustmentBucket, ViewsBucket } from './counter-files.ts';
import { openVoteStore } from './vote-store.ts';
import { LowdbJobs, type JobBucket } from './jobs.ts';
import { LowdbMeta, type MetaFile } from './meta.ts';
import { LowdbSessions, type SessionBucket } from './sessions.ts';
import { LowdbMembers, type MemberBucket } from './members.ts';
import { LowdbSources, type SourcesFile } from './sources.ts';
import { LowdbSubscriberList, type SubscriberBucket } from './subscribers.ts';
import { LowdbBriefings, type BriefingsFile } from './briefings.ts';
import { LowdbUserDirectory, type UsersFile } from './users.ts';
import { LowdbAudit } from './audit.ts';
import { LowdbAnalytics } from './analytics.ts';
import { LowdbRevisions } from './revisions.ts';
import { LowdbTrash } from './trash.ts';
import { LowdbLive } from './live.ts';
import { LocalRenderedPages } from '../local-pages.ts';
import { registerWriteGate } from './write-gate.ts';
import { snapshotDataDir } from './snapshot.ts';

/** Brings the folder to layout 2: marks a fresh one, migrates a layout-1 one, finishes an interrupted move. */
async function prepareLayout(dir: string, readOnly: boolean, log: StoreLog): Promise<void> {
  const state = layoutState(dir);
  if (state === 'current') {
    if (!readOnly) await moveLegacyAside(dir);
    return;
  }
  if (readOnly && state === 'fresh') return;
  // A read-only open of a layout-1 folder migrates it too, under the lock (refused while a server holds it).
  const release = readOnly ? acquireLock(dir) : () => {};
  try {
    // The migration writes the article files itself: no snapshot may describe the folder before it.
    removeListingSnapshot(dir);
    if (state === 'fresh') await markFresh(dir);
    else await migrateLegacy(dir, (line) => log.info(line));
  } finally {
    release();
  }
}

/**
 * Opens the store in DATA_DIR. `write` takes the lock; `read` is a snapshot for builds and reports.
 * `lazyTextIndex` (default: a read snapshot's) builds the text index on the first search instead of at open.
 */
export async function openLowdbStore(
  dataDir: string,
  mode: StoreMode = 'write',
  options: { lazyTextIndex?: boolean; log?: StoreLog } = {},
): Promise<Store> {
  // CLI tools (db:export, the benches) open the store without a logger: their terminal is the log.
  const log: StoreLog = options.log ?? { info: (line) => console.log(line), error: (line) => console.error(line) };
  const dir = path.resolve(dataDir);
  fs.mkdirSync(dir, { recursive: true });
  const locked = mode === 'write' ? acquireLock(dir) : () => {};
  // A backup holds the gate to take the folder as one point in time (see write-gate.ts).
  const gate = mode === 'write' ? registerWriteGate(dir) : undefined;
  const release = () => {
    gate?.unregister();
    locked();
  };
  const readOnly = mode === 'read';
  try {
    await prepareLayout(dir, readOnly, log);
    const open = <T>(name: string, defaults: T) => JsonCollection.open<T>(path.join(dir, `${name}.json`), defaults, readOnly);
    const records: ArticleRecord[] = [];
    const [version, views, votes, adjustments, comments, subscribers, sessions, jobs, sources, users, meta, briefings, members] =
      await Promise.all([
        JsonCollection.open<ArticlesVersionFile>(versionFile(dir), { version: 0 }, readOnly),
        BucketSet.load<ViewsBucket>(dir, 'views', () => ({}), readOnly),
        openVoteStore(dir, readOnly),
        BucketSet.load<AdjustmentBucket>(dir, 'voteAdjustments', () => ({}), readOnly),
        BucketSet.load<CommentBucket>(dir, 'comments', () => ({}), readOnly),
        BucketSet.load<SubscriberBucket>(dir, 'subscribers', () => ({}), readOnly),
        BucketSet.load<SessionBucket>(dir, 'sessions', () => ({}), readOnly),
        // A job whose write fails stays queued in memory (the worker still renders it) and is stored by the bucket's next write.
        BucketSet.load<JobBucket>(dir, 'jobs', () => ({}), readOnly, { keepFailedChanges: true }),
        open<SourcesFile>('sources', { sources: [] }),
        open<UsersFile>('users', { users: [] }),
        open<MetaFile>('meta', {}),
        open<BriefingsFile>('briefings', { runs: [] }),
        BucketSet.load<MemberBucket>(dir, 'members', () => ({}), readOnly),
      ]);
    // Bodies stay on disk: only the listing fields are kept in memory, from the snapshot of the last
    // clean close when no article was written since, else from every article file with its body cut out.
    const bodies = new ArticleBodies(dir);
    const snapshot = readListingSnapshot(dir, version.data.version);
    if (snapshot) for (const record of snapshot) records.push(bodies.detach(record));
    else loadArticleFiles<ArticleRecord>(dir, (_file, record) => void records.push(bodies.detach(record)), parseArticleWithoutBody);
    const audit = await LowdbAudit.open(dir, readOnly);
    if (!readOnly && typeof meta.data.storeId !== 'string') {
      meta.data.storeId = randomUUID();
      await meta.write();
    }
    const articles = new LowdbArticles(dir, version, records, bodies, readOnly, options.lazyTextIndex ?? readOnly);
    if (snapshot) articles.openedFromSnapshot();
    const counters = new LowdbCounters(views, votes, adjustments, log);
    const commentRepo = new LowdbComments(comments);
    const subscriberRepo = new LowdbSubscriberList(subscribers);
    const sessionRepo = new LowdbSessions(sessions);
    const memberRepo = new LowdbMembers(members);
    const jobRepo = new LowdbJobs(jobs);
    const analytics = new LowdbAnalytics(dir, readOnly);
    let closed = false;
    const trash = await LowdbTrash.open(dir, readOnly);
    const live = await LowdbLive.open(dir, readOnly);
    return {
      id: typeof meta.data.storeId === 'string' ? meta.data.storeId : 'unseeded',
      articles,
      counters,
      comments: commentRepo,
      sources: new LowdbSources(sources),
      subscribers: subscriberRepo,
      briefings: new LowdbBriefings(briefings, dir, readOnly),
      users: new LowdbUserDirectory(users),
      audit,
      sessions: sessionRepo,
      jobs: jobRepo,
      limits: new MemoryLimits(),
      meta: new LowdbMeta(meta),
      revisions: new LowdbRevisions(dir, readOnly),
      trash,
      pages: new LocalRenderedPages(),
      analytics,
      live,
      members: memberRepo,
      kind: 'lowdb',
      // Through this store's own module copy, whose gate every write of this store passes (the Astro
      // bundle's endpoint asks through the store, never through a gate of its own copy).
      snapshotDataDir: (snapshotOptions) => snapshotDataDir(dir, snapshotOptions),
      async check() {
        if (closed) return { ok: false, reason: 'the store is closed' };
        // In this process: what can go wrong is the folder itself (removed, or replaced by another layout).
        try {
          const marker = JSON.parse(await fs.promises.readFile(path.join(dir, LAYOUT_FILE), 'utf8')) as { layout?: unknown };
          return marker.layout === LAYOUT_VERSION
            ? { ok: true }
            : { ok: false, reason: `the data folder has layout ${String(marker.layout)}, this version reads ${LAYOUT_VERSION}` };
        } catch (error) {
          return {
            ok: false,
            reason: `the data folder cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
          };
        }
      },
      async close() {
        if (closed) return;
        closed = true;
        // Every write still in flight reaches the disk before the lock is given up.
        await Promise.all([
          articles.settle(),
          counters.settle(),
          commentRepo.settle(),
          subscriberRepo.settle(),
          sessionRepo.settle(),
          memberRepo.settle(),
          jobRepo.settle(),
          analytics.settle(),
          sources.settle(),
          users.settle(),
          meta.settle(),
          briefings.settle(),
          audit.settled(),
          live.settle(),
        ]);
        try {
          await articles.snapshotListing();
        } catch (error) {
          // Only a shortcut for the next open (which then reads the article files): a full disk must not keep the lock.
          log.error(`[store] the listing snapshot was not written: ${String(error)}`);
        }
        await articles.closeText();
        release();
      },
    };
  } catch (error) {
    release();
    throw error;
  }
}
