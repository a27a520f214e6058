/**
 * The lowdb collections besides articles: votes and views, comments, subscribers, sessions and jobs in hashed buckets; sources, users and
 * meta in one small file each.
 */
import type { ArticleCounters, VoteKind } from '../../schemas/article.ts';
import type { Comment, CommentFilter } from '../../schemas/comment.ts';
import type { NewsSource } from '../../schemas/source.ts';
import type { Subscriber } from '../../schemas/newsletter.ts';
import type { Session, User } from '../../schemas/auth.ts';
import type { Job } from '../../schemas/misc.ts';
import type {
  CommentRepository,
  CounterRepository,
  JobRepository,
  LimitRepository,
  MetaRepository,
  Page,
  SessionRepository,
  SourceRepository,
  UserRepository,
} from '../types.ts';
import type { JsonCollection } from './file.ts';
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

function matchesComment(comment: Comment, filter: CommentFilter): boolean {
  if (filter.articleId && comment.articleId !== filter.articleId) return false;
  if (filter.status && comment.status !== filter.status) return false;
  if (filter.search) {
    const needle = filter.search.toLowerCase();
    const haystack = `${comment.authorName}\n${comment.authorEmail}\n${comment.content}`.toLowerCase();
    if (!haystack.includes(needle)) return false;
  }
  return true;
}

/** The layout-1 comments.json (read by the migration). */
export type CommentsFile = { comments: Comment[] };
/** comments/<bucket>.json: the comments whose id hashes to the bucket. */
export type CommentBucket = Record<string, Comment>;

/** Newest first; ties by id so every comment has one place (found by binary search). */
function byNewest(a: Comment, b: Comment): number {
  return a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

function sortedIndex(list: Comment[], item: Comment): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (byNewest(list[mid]!, item) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function insertComment(list: Comment[], item: Comment): void {
  list.splice(sortedIndex(list, item), 0, item);
}

function removeComment(list: Comment[], item: Comment): void {
  const i = sortedIndex(list, item);
  if (list[i] === item) list.splice(i, 1);
}

/** Comments in hashed buckets; in memory a newest-first list overall and per article, kept sorted on each write. */
export class LowdbComments implements CommentRepository {
  readonly #buckets: BucketSet<CommentBucket>;
  readonly #byId = new Map<string, Comment>();
  readonly #all: Comment[] = [];
  readonly #byArticle = new Map<string, Comment[]>();

  constructor(buckets: BucketSet<CommentBucket>) {
    this.#buckets = buckets;
    for (const [, bucket] of buckets.entries()) for (const comment of Object.values(bucket)) {
      this.#byId.set(comment.id, comment);
      this.#all.push(comment);
    }
    this.#all.sort(byNewest);
    for (const comment of this.#all) this.#articleList(comment.articleId).push(comment);
  }

  #articleList(articleId: string): Comment[] {
    let list = this.#byArticle.get(articleId);
    if (!list) this.#byArticle.set(articleId, (list = []));
    return list;
  }

  #forget(comment: Comment): number {
    this.#byId.delete(comment.id);
    removeComment(this.#all, comment);
    const list = this.#byArticle.get(comment.articleId);
    if (list) {
      removeComment(list, comment);
      if (list.length === 0) this.#byArticle.delete(comment.articleId);
    }
    const b = bucketOf('comments', comment.id);
    delete this.#buckets.get(b)[comment.id];
    return b;
  }

  async get(id: string) {
    return this.#byId.get(id);
  }

  async list(filter: CommentFilter, page: Page) {
    const source = filter.articleId ? (this.#byArticle.get(filter.articleId) ?? []) : this.#all;
    if (!filter.status && !filter.search) return source.slice(page.offset, page.offset + page.limit);
    return source.filter((c) => matchesComment(c, filter)).slice(page.offset, page.offset + page.limit);
  }

  async count(filter: CommentFilter) {
    const source = filter.articleId ? (this.#byArticle.get(filter.articleId) ?? []) : this.#all;
    if (!filter.status && !filter.search) return source.length;
    return source.reduce((n, c) => (matchesComment(c, filter) ? n + 1 : n), 0);
  }

  async insert(comment: Comment) {
    const stored = { ...comment };
    const old = this.#byId.get(stored.id);
    if (old) this.#forget(old);
    this.#byId.set(stored.id, stored);
    insertComment(this.#all, stored);
    insertComment(this.#articleList(stored.articleId), stored);
    const b = bucketOf('comments', stored.id);
    this.#buckets.get(b)[stored.id] = stored;
    await this.#buckets.write(b);
  }

  async setStatus(id: string, status: Comment['status']) {
    const comment = this.#byId.get(id);
    if (!comment) return undefined;
    comment.status = status;
    await this.#buckets.write(bucketOf('comments', id));
    return { ...comment };
  }

  async delete(id: string) {
    const comment = this.#byId.get(id);
    if (!comment) return false;
    await this.#buckets.write(this.#forget(comment));
    return true;
  }

  async deleteForArticle(articleId: string) {
    const list = this.#byArticle.get(articleId);
    if (!list) return;
    const touched = new Set<number>();
    for (const comment of [...list]) touched.add(this.#forget(comment));
    await Promise.all([...touched].map((b) => this.#buckets.write(b)));
  }

  async settle(): Promise<void> {
    await this.#buckets.settle();
  }
}

export type SourcesFile = { sources: NewsSource[] };

export class LowdbSources implements SourceRepository {
  readonly #file: JsonCollection<SourcesFile>;
  constructor(file: JsonCollection<SourcesFile>) {
    this.#file = file;
  }
  async get(id: string) {
    const found = this.#file.data.sources.find((s) => s.id === id);
    return found && { ...found };
  }
  async list() {
    return this.#file.data.sources.map((s) => ({ ...s }));
  }
  async insert(source: NewsSource) {
    this.#file.data.sources.push({ ...source });
    await this.#file.write();
  }
  async update(id: string, change: Partial<Omit<NewsSource, 'id'>>) {
    const index = this.#file.data.sources.findIndex((s) => s.id === id);
    if (index < 0) return undefined;
    const updated = { ...this.#file.data.sources[index]!, ...change } as NewsSource;
    for (const key of Object.keys(updated) as (keyof NewsSource)[]) if (updated[key] === undefined) delete updated[key];
    this.#file.data.sources[index] = updated;
    await this.#file.write();
    return { ...updated };
  }
  async delete(id: string) {
    const before = this.#file.data.sources.length;
    this.#file.data.sources = this.#file.data.sources.filter((s) => s.id !== id);
    if (before === this.#file.data.sources.length) return false;
    await this.#file.write();
    return true;
  }
}

/** The layout-1 subscribers.json (read by the migration). */
export type SubscribersFile = { subscribers: Subscriber[] };


export type UsersFile = { users: User[] };

export class LowdbUsers implements UserRepository {
  readonly #file: JsonCollection<UsersFile>;
  constructor(file: JsonCollection<UsersFile>) {
    this.#file = file;
  }
  async get(id: string) {
    return this.#file.data.users.find((u) => u.id === id);
  }
  async getByUsername(username: string) {
    const wanted = username.toLowerCase();
    return this.#file.data.users.find((u) => u.username.toLowerCase() === wanted);
  }
  async count() {
    return this.#file.data.users.length;
  }
  async upsert(user: User) {
    const index = this.#file.data.users.findIndex((u) => u.username.toLowerCase() === user.username.toLowerCase());
    if (index >= 0) this.#file.data.users[index] = { ...user, id: this.#file.data.users[index]!.id };
    else this.#file.data.users.push({ ...user });
    await this.#file.write();
    return { ...this.#file.data.users[index >= 0 ? index : this.#file.data.users.length - 1]! };
  }
}

/** The layout-1 sessions.json (read by the migration). */
export type SessionsFile = { sessions: Record<string, Session> };
/** sessions/<bucket>.json: sessions by id (the token's SHA-256), bucketed by id. */
export type SessionBucket = Record<string, Session>;

export class LowdbSessions implements SessionRepository {
  readonly #buckets: BucketSet<SessionBucket>;
  readonly #byId = new Map<string, Session>();

  constructor(buckets: BucketSet<SessionBucket>) {
    this.#buckets = buckets;
    for (const [, bucket] of buckets.entries()) for (const session of Object.values(bucket)) this.#byId.set(session.id, session);
  }
  #drop(id: string): number {
    const b = bucketOf('sessions', id);
    this.#byId.delete(id);
    delete this.#buckets.get(b)[id];
    return b;
  }
  async get(id: string) {
    const session = this.#byId.get(id);
    return session && { ...session };
  }
  async insert(session: Session) {
    const b = bucketOf('sessions', session.id);
    const stored = { ...session };
    this.#byId.set(stored.id, stored);
    this.#buckets.get(b)[stored.id] = stored;
    await this.#buckets.write(b);
  }
  async setExpiry(id: string, expiresAt: string) {
    const session = this.#byId.get(id);
    if (!session) return;
    session.expiresAt = expiresAt;
    await this.#buckets.write(bucketOf('sessions', id));
  }
  async delete(id: string) {
    if (!this.#byId.has(id)) return;
    await this.#buckets.write(this.#drop(id));
  }
  async #dropWhere(test: (session: Session) => boolean): Promise<number> {
    const touched = new Set<number>();
    let removed = 0;
    for (const session of [...this.#byId.values()]) {
      if (!test(session)) continue;
      touched.add(this.#drop(session.id));
      removed++;
    }
    await Promise.all([...touched].map((b) => this.#buckets.write(b)));
    return removed;
  }
  async deleteForUser(userId: string) {
    await this.#dropWhere((s) => s.userId === userId);
  }
  async deleteExpired(now: string) {
    return this.#dropWhere((s) => s.expiresAt <= now);
  }
  async settle(): Promise<void> {
    await this.#buckets.settle();
  }
}

/** The layout-1 jobs.json (read by the migration). */
export type JobsFile = { jobs: Job[]; seq: number };
/** jobs/<bucket>.json: queued jobs by path, each with its place in the queue. */
export type JobBucket = Record<string, { job: Job; order: number }>;

/** The regeneration queue: jobs bucketed by path, kept in memory in queue order (a Map's insertion order). */
export class LowdbJobs implements JobRepository {
  readonly #buckets: BucketSet<JobBucket>;
  /** Queue order: re-inserting a key moves it to the back. */
  readonly #queue = new Map<string, { job: Job; order: number }>();
  readonly #byId = new Map<string, { job: Job; order: number }>();
  #seq = 0;

  constructor(buckets: BucketSet<JobBucket>) {
    this.#buckets = buckets;
    const entries: { job: Job; order: number }[] = [];
    for (const [, bucket] of buckets.entries()) entries.push(...Object.values(bucket));
    entries.sort((a, b) => a.order - b.order);
    for (const entry of entries) {
      this.#queue.set(entry.job.path, entry);
      this.#byId.set(entry.job.id, entry);
      this.#seq = Math.max(this.#seq, entry.order, Number(entry.job.id) || 0);
    }
  }
  async enqueue(paths: readonly string[], now: string) {
    let added = 0;
    const touched = new Set<number>();
    for (const path of new Set(paths)) {
      touched.add(bucketOf('jobs', path));
      const existing = this.#queue.get(path);
      if (existing) {
        existing.job.queuedAt = now;
        continue;
      }
      const order = ++this.#seq;
      const entry = { job: { id: String(order), path, createdAt: now, queuedAt: now, attempts: 0 } as Job, order };
      this.#queue.set(path, entry);
      this.#byId.set(entry.job.id, entry);
      this.#buckets.get(bucketOf('jobs', path))[path] = entry;
      added++;
    }
    await Promise.all([...touched].map((b) => this.#buckets.write(b)));
    return added;
  }
  async list(limit: number) {
    const out: Job[] = [];
    for (const { job } of this.#queue.values()) {
      if (out.length >= limit) break;
      out.push({ ...job });
    }
    return out;
  }
  async complete(id: string, startedAt: string) {
    const entry = this.#byId.get(id);
    if (!entry) return;
    const b = bucketOf('jobs', entry.job.path);
    if (entry.job.queuedAt > startedAt) {
      // Re-queued while it was rendering: keep it so the newest data is rendered too.
      entry.job.attempts = 0;
    } else {
      this.#queue.delete(entry.job.path);
      this.#byId.delete(id);
      delete this.#buckets.get(b)[entry.job.path];
    }
    await this.#buckets.write(b);
  }
  async fail(id: string, error: string) {
    const entry = this.#byId.get(id);
    if (!entry) return;
    entry.job.attempts++;
    entry.job.lastError = error;
    // Move it to the back so one broken page does not block the others.
    entry.order = ++this.#seq;
    this.#queue.delete(entry.job.path);
    this.#queue.set(entry.job.path, entry);
    await this.#buckets.write(bucketOf('jobs', entry.job.path));
  }
  async size() {
    return this.#queue.size;
  }
  async settle(): Promise<void> {
    await this.#buckets.settle();
  }
}

/**
 * Rate-limit windows and throttles, in memory: the lowdb store is owned by one process (its lock),
 * so a restart forgetting open windows is the only loss. A shared store (PostgreSQL) keeps them in a table.
 */
export class MemoryLimits implements LimitRepository {
  readonly #entries = new Map<string, { value: unknown; expiresAt: number }>();
  #lastSweep = 0;

  #sweep(now: number): void {
    if (now - this.#lastSweep < 60_000) return;
    this.#lastSweep = now;
    for (const [key, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(key);
  }

  async hit(key: string, windowMs: number, now: number) {
    this.#sweep(now);
    const entry = this.#entries.get(key);
    if (!entry || entry.expiresAt <= now) {
      this.#entries.set(key, { value: 1, expiresAt: now + windowMs });
      return { count: 1, resetAt: now + windowMs };
    }
    entry.value = (entry.value as number) + 1;
    return { count: entry.value as number, resetAt: entry.expiresAt };
  }
  async get<T>(key: string, now: number) {
    const entry = this.#entries.get(key);
    if (!entry || entry.expiresAt <= now) return undefined;
    return entry.value as T;
  }
  async set<T>(key: string, value: T, expiresAt: number) {
    this.#entries.set(key, { value, expiresAt });
  }
  async delete(key: string) {
    this.#entries.delete(key);
  }
}

export type MetaFile = Record<string, unknown>;

export class LowdbMeta implements MetaRepository {
  readonly #file: JsonCollection<MetaFile>;
  constructor(file: JsonCollection<MetaFile>) {
    this.#file = file;
  }
  async get<T>(key: string) {
    return this.#file.data[key] as T | undefined;
  }
  async set<T>(key: string, value: T) {
    this.#file.data[key] = value;
    await this.#file.write();
  }
}
