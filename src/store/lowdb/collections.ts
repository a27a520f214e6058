/** The smaller lowdb collections: counters and votes, comments, sources, subscribers, users, sessions, jobs, meta. */
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
  SubscriberRepository,
  UserRepository,
} from '../types.ts';
import type { JsonCollection } from './file.ts';

/** Views per article: the hottest counter, in a file of its own so a page view never rewrites the votes. */
export type CountersFile = { views: Record<string, number> };
/**
 * Votes and the like/dislike tallies they add up to, in one file: one write (one rename) records a
 * vote and its count together, so a crash can never leave the two disagreeing.
 * votes[articleId][visitorId] = kind; tallies[articleId] = counts (admin adjustments included).
 */
export type VotesFile = {
  votes: Record<string, Record<string, VoteKind>>;
  tallies: Record<string, { likes: number; dislikes: number }>;
};

export class LowdbCounters implements CounterRepository {
  readonly #counters: JsonCollection<CountersFile>;
  readonly #votes: JsonCollection<VotesFile>;

  constructor(counters: JsonCollection<CountersFile>, votes: JsonCollection<VotesFile>) {
    this.#counters = counters;
    this.#votes = votes;
  }

  #read(articleId: string): ArticleCounters {
    const tally = this.#votes.data.tallies[articleId];
    return { likes: tally?.likes ?? 0, dislikes: tally?.dislikes ?? 0, views: this.#counters.data.views[articleId] ?? 0 };
  }

  #tally(articleId: string): { likes: number; dislikes: number } {
    return (this.#votes.data.tallies[articleId] ??= { likes: 0, dislikes: 0 });
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
    return this.#votes.data.votes[articleId]?.[visitorId];
  }

  async vote(articleId: string, visitorId: string, kind: VoteKind) {
    const votes = (this.#votes.data.votes[articleId] ??= {});
    const previous = votes[visitorId];
    if (previous !== kind) {
      const tally = this.#tally(articleId);
      votes[visitorId] = kind;
      if (previous === 'like') tally.likes = Math.max(0, tally.likes - 1);
      if (previous === 'dislike') tally.dislikes = Math.max(0, tally.dislikes - 1);
      if (kind === 'like') tally.likes++;
      else tally.dislikes++;
      await this.#votes.write();
    }
    return { ...this.#read(articleId), vote: kind };
  }

  async adjust(articleId: string, kind: VoteKind, amount: number) {
    const tally = this.#tally(articleId);
    if (kind === 'like') tally.likes = Math.max(0, tally.likes + amount);
    else tally.dislikes = Math.max(0, tally.dislikes + amount);
    await this.#votes.write();
    return this.#read(articleId);
  }

  async incrementViews(articleId: string) {
    const views = this.#counters.data.views;
    views[articleId] = (views[articleId] ?? 0) + 1;
    await this.#counters.write();
  }

  async deleteArticle(articleId: string) {
    delete this.#counters.data.views[articleId];
    delete this.#votes.data.votes[articleId];
    delete this.#votes.data.tallies[articleId];
    await Promise.all([this.#votes.write(), this.#counters.write()]);
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

export type CommentsFile = { comments: Comment[] };

/** Comments, kept newest first in the file so listings are a slice. */
export class LowdbComments implements CommentRepository {
  readonly #file: JsonCollection<CommentsFile>;
  readonly #byArticle = new Map<string, Comment[]>();

  constructor(file: JsonCollection<CommentsFile>) {
    this.#file = file;
    file.data.comments.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
    this.#reindex();
  }

  #reindex(): void {
    this.#byArticle.clear();
    for (const comment of this.#file.data.comments) {
      let list = this.#byArticle.get(comment.articleId);
      if (!list) this.#byArticle.set(comment.articleId, (list = []));
      list.push(comment);
    }
  }

  async get(id: string) {
    return this.#file.data.comments.find((c) => c.id === id);
  }

  async list(filter: CommentFilter, page: Page) {
    const source = filter.articleId ? (this.#byArticle.get(filter.articleId) ?? []) : this.#file.data.comments;
    return source.filter((c) => matchesComment(c, filter)).slice(page.offset, page.offset + page.limit);
  }

  async count(filter: CommentFilter) {
    const source = filter.articleId ? (this.#byArticle.get(filter.articleId) ?? []) : this.#file.data.comments;
    return source.reduce((n, c) => (matchesComment(c, filter) ? n + 1 : n), 0);
  }

  async insert(comment: Comment) {
    this.#file.data.comments.unshift({ ...comment });
    this.#reindex();
    await this.#file.write();
  }

  async setStatus(id: string, status: Comment['status']) {
    const comment = this.#file.data.comments.find((c) => c.id === id);
    if (!comment) return undefined;
    comment.status = status;
    await this.#file.write();
    return { ...comment };
  }

  async delete(id: string) {
    const before = this.#file.data.comments.length;
    this.#file.data.comments = this.#file.data.comments.filter((c) => c.id !== id);
    if (this.#file.data.comments.length === before) return false;
    this.#reindex();
    await this.#file.write();
    return true;
  }

  async deleteForArticle(articleId: string) {
    const before = this.#file.data.comments.length;
    this.#file.data.comments = this.#file.data.comments.filter((c) => c.articleId !== articleId);
    if (this.#file.data.comments.length === before) return;
    this.#reindex();
    await this.#file.write();
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

export type SubscribersFile = { subscribers: Subscriber[] };

export class LowdbSubscribers implements SubscriberRepository {
  readonly #file: JsonCollection<SubscribersFile>;
  constructor(file: JsonCollection<SubscribersFile>) {
    this.#file = file;
  }
  async getByEmail(email: string) {
    return this.#file.data.subscribers.find((s) => s.email === email);
  }
  async getByToken(token: string) {
    return this.#file.data.subscribers.find((s) => s.token === token);
  }
  async upsert(subscriber: Subscriber) {
    const existing = this.#file.data.subscribers.find((s) => s.email === subscriber.email);
    if (existing) {
      if (existing.unsubscribedAt) {
        delete existing.unsubscribedAt;
        await this.#file.write();
      }
      return { ...existing };
    }
    this.#file.data.subscribers.push({ ...subscriber });
    await this.#file.write();
    return { ...subscriber };
  }
  async unsubscribe(token: string, at: string) {
    const existing = this.#file.data.subscribers.find((s) => s.token === token);
    if (!existing) return undefined;
    if (!existing.unsubscribedAt) {
      existing.unsubscribedAt = at;
      await this.#file.write();
    }
    return { ...existing };
  }
  async count() {
    return this.#file.data.subscribers.filter((s) => !s.unsubscribedAt).length;
  }
}

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

export type SessionsFile = { sessions: Record<string, Session> };

export class LowdbSessions implements SessionRepository {
  readonly #file: JsonCollection<SessionsFile>;
  constructor(file: JsonCollection<SessionsFile>) {
    this.#file = file;
  }
  async get(id: string) {
    const session = this.#file.data.sessions[id];
    return session && { ...session };
  }
  async insert(session: Session) {
    this.#file.data.sessions[session.id] = { ...session };
    await this.#file.write();
  }
  async setExpiry(id: string, expiresAt: string) {
    const session = this.#file.data.sessions[id];
    if (!session) return;
    session.expiresAt = expiresAt;
    await this.#file.write();
  }
  async delete(id: string) {
    if (!(id in this.#file.data.sessions)) return;
    delete this.#file.data.sessions[id];
    await this.#file.write();
  }
  async deleteForUser(userId: string) {
    let changed = false;
    for (const [id, session] of Object.entries(this.#file.data.sessions)) {
      if (session.userId === userId) {
        delete this.#file.data.sessions[id];
        changed = true;
      }
    }
    if (changed) await this.#file.write();
  }
  async deleteExpired(now: string) {
    let removed = 0;
    for (const [id, session] of Object.entries(this.#file.data.sessions)) {
      if (session.expiresAt <= now) {
        delete this.#file.data.sessions[id];
        removed++;
      }
    }
    if (removed) await this.#file.write();
    return removed;
  }
}

export type JobsFile = { jobs: Job[]; seq: number };

export class LowdbJobs implements JobRepository {
  readonly #file: JsonCollection<JobsFile>;
  constructor(file: JsonCollection<JobsFile>) {
    this.#file = file;
  }
  async enqueue(paths: readonly string[], now: string) {
    const byPath = new Map(this.#file.data.jobs.map((j) => [j.path, j]));
    let added = 0;
    for (const path of new Set(paths)) {
      const existing = byPath.get(path);
      if (existing) {
        existing.queuedAt = now;
        continue;
      }
      const job: Job = { id: String(++this.#file.data.seq), path, createdAt: now, queuedAt: now, attempts: 0 };
      this.#file.data.jobs.push(job);
      byPath.set(path, job);
      added++;
    }
    if (paths.length) await this.#file.write();
    return added;
  }
  async list(limit: number) {
    return this.#file.data.jobs.slice(0, limit).map((j) => ({ ...j }));
  }
  async complete(id: string, startedAt: string) {
    const job = this.#file.data.jobs.find((j) => j.id === id);
    if (!job) return;
    if (job.queuedAt > startedAt) {
      // Re-queued while it was rendering: keep it so the newest data is rendered too.
      job.attempts = 0;
    } else {
      this.#file.data.jobs = this.#file.data.jobs.filter((j) => j.id !== id);
    }
    await this.#file.write();
  }
  async fail(id: string, error: string) {
    const job = this.#file.data.jobs.find((j) => j.id === id);
    if (!job) return;
    job.attempts++;
    job.lastError = error;
    // Move it to the back so one broken page does not block the others.
    this.#file.data.jobs = [...this.#file.data.jobs.filter((j) => j.id !== id), job];
    await this.#file.write();
  }
  async size() {
    return this.#file.data.jobs.length;
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
