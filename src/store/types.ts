/** The Store interface: every read and write of the product goes through it; implementations are swappable. */
import type {
  ArticleCounters,
  ArticleFilter,
  ArticlePeriod,
  ArticleRecord,
  ArticleStats,
  TermCount,
  VoteKind,
} from '../schemas/article.ts';
import type { TermKind } from '../schemas/taxonomy.ts';
import type { Comment, CommentFilter } from '../schemas/comment.ts';
import type { NewsSource } from '../schemas/source.ts';
import type { BriefingRun, Delivery, Subscriber, SubscriberCounts, SubscriberFilter } from '../schemas/newsletter.ts';
import type { Session, User } from '../schemas/auth.ts';
import type { AuditEntry } from '../schemas/audit.ts';
import type { Job } from '../schemas/misc.ts';
import type { Revision, TrashEntry } from '../schemas/revision.ts';
import type { ViewCount, ViewDimension, ViewGrain } from '../schemas/analytics.ts';
import type { LiveCoverage, LiveUpdate } from '../schemas/live.ts';
import type { Member, MemberFilter } from '../schemas/member.ts';

export type Page = { offset: number; limit: number };

/** Sort orders the article listing supports. `recent`: publishedAt (else updatedAt) newest first. */
export type ArticleSort = 'recent' | 'updated';

/**
 * `body`: the caller reads `bodyHtml` (a page, the API's article): a store keeping bodies on disk reads it
 * before answering, without blocking the thread, instead of on first access.
 */
export type ArticleRead = { body?: boolean };

/** Records answered by a repository are shared with its indexes: treat them as read-only. */
export interface ArticleRepository {
  get(id: string, options?: ArticleRead): Promise<ArticleRecord | undefined>;
  getBySlug(slug: string, options?: ArticleRead): Promise<ArticleRecord | undefined>;
  /** Articles matching the filter, in the given order, sliced by page. */
  list(filter: ArticleFilter, page: Page, sort?: ArticleSort): Promise<ArticleRecord[]>;
  count(filter: ArticleFilter): Promise<number>;
  /** Full-text search over title, dek, body, author, tags and source label: relevance, then recency. */
  search(query: string, filter: ArticleFilter, page: Page): Promise<{ items: ArticleRecord[]; total: number }>;
  stats(): Promise<ArticleStats>;
  /**
   * Each month (articlePeriod) that has published articles, newest first: kept by the store as
   * articles change, so the sitemap index does not read the whole archive on every publish.
   */
  periods(): Promise<ArticlePeriod[]>;
  /**
   * Every tag (or author) slug of published articles with its count and the spelling its newest
   * article uses, by slug (issue 35: the tag and author pages, the dashboard's tag list).
   */
  terms(kind: TermKind): Promise<TermCount[]>;
  /** Whether a slug is taken (by an article other than `exceptId`). */
  slugExists(slug: string, exceptId?: string): Promise<boolean>;
  /** Finds an ingested article by its origin (source + guid) or canonical URL. */
  findByOrigin(sourceId: string, guid: string): Promise<ArticleRecord | undefined>;
  findByCanonicalUrl(url: string): Promise<ArticleRecord | undefined>;
  /** Scheduled articles whose scheduledFor is at or before `now`. */
  listDue(now: string): Promise<ArticleRecord[]>;
  insert(article: ArticleRecord): Promise<void>;
  /** Inserts many new articles in one go (a bulk load, such as the bench's generated archive): as insert() for each, faster. */
  insertMany(articles: readonly ArticleRecord[]): Promise<void>;
  /** Replaces a stored article (the store bumps its version); answers false when it does not exist. */
  replace(article: ArticleRecord): Promise<boolean>;
  /**
   * Compare-and-set (issue 14): replaces the article only if its stored version is still
   * `expectedVersion` (a record without one is version 1), in one step with no await in between.
   * Answers the stored record (version bumped), or the current one with `conflict`, or undefined when missing.
   */
  replaceIfVersion(
    article: ArticleRecord,
    expectedVersion: number,
  ): Promise<{ saved: ArticleRecord } | { conflict: ArticleRecord } | undefined>;
  /** Publishes a scheduled article if it is still scheduled (compare-and-set, exactly once). */
  publishIfScheduled(id: string, now: string): Promise<ArticleRecord | undefined>;
  delete(id: string): Promise<boolean>;
  /** Monotonic version of the article collection, bumped by every write. */
  version(): Promise<number>;
}

/** Revisions of articles (issue 14): one small file per revision, sharded by article id. */
export interface RevisionRepository {
  /** Every revision of an article, newest first. */
  list(articleId: string): Promise<Revision[]>;
  get(articleId: string, rev: number): Promise<Revision | undefined>;
  /** The newest revision, reading only its file (autosave coalescing and 409 answers ask often). */
  latest(articleId: string): Promise<Revision | undefined>;
  /** Writes a revision (a new one, or an existing `rev` again when autosaves are coalesced). */
  save(revision: Revision): Promise<void>;
  deleteForArticle(articleId: string): Promise<void>;
}

/** Deleted articles kept for restoring (issue 14): one small file per entry, sharded by article id. */
export interface TrashRepository {
  get(articleId: string): Promise<TrashEntry | undefined>;
  /** Newest deletion first. */
  list(): Promise<TrashEntry[]>;
  put(entry: TrashEntry): Promise<void>;
  delete(articleId: string): Promise<boolean>;
  /** Whether a trashed article holds the slug (it stays reserved until purged). */
  slugExists(slug: string): Promise<boolean>;
}

/**
 * Live coverage (issue 35): each live article's coverage state and its updates, records of their own
 * (an update never touches the article's version). Few articles ever go live; each holds its own updates.
 */
export interface LiveRepository {
  getCoverage(articleId: string): Promise<LiveCoverage | undefined>;
  /** Inserts or replaces an article's coverage state. */
  putCoverage(coverage: LiveCoverage): Promise<void>;
  /** Every article that has a coverage state (running or ended), oldest start first. */
  listCoverage(): Promise<LiveCoverage[]>;
  /** Every update of an article, newest first (by createdAt, then id). */
  listUpdates(articleId: string): Promise<LiveUpdate[]>;
  getUpdate(articleId: string, id: string): Promise<LiveUpdate | undefined>;
  /** Inserts or replaces an update. */
  putUpdate(update: LiveUpdate): Promise<void>;
  deleteUpdate(articleId: string, id: string): Promise<boolean>;
  /** Removes the coverage and every update of an article (a purge from the trash). */
  deleteForArticle(articleId: string): Promise<void>;
}

/** One visitor's vote on one article. */
export type VoteRecord = { articleId: string; visitorId: string; kind: VoteKind };

export interface CounterRepository {
  get(articleId: string): Promise<ArticleCounters>;
  getMany(articleIds: readonly string[]): Promise<Map<string, ArticleCounters>>;
  /** Records a visitor's vote; idempotent per visitor, moves the vote when it changes. */
  vote(articleId: string, visitorId: string, kind: VoteKind): Promise<ArticleCounters & { vote: VoteKind }>;
  /** Records many visitors' votes in one go (a bulk load): as vote() for each in order, a bucket or a statement at a time. */
  importVotes(votes: readonly VoteRecord[]): Promise<void>;
  visitorVote(articleId: string, visitorId: string): Promise<VoteKind | undefined>;
  /** Adds (or, negative, removes) likes or dislikes, never below zero. */
  adjust(articleId: string, kind: VoteKind, amount: number): Promise<ArticleCounters>;
  incrementViews(articleId: string): Promise<void>;
  /**
   * Adds many articles' views at once (the recorder's flush): one write per bucket file or one statement.
   * A failure that stored part of them throws PartlyStoredError with the part that was not.
   */
  addViews(views: ReadonlyMap<string, number>): Promise<void>;
  deleteArticle(articleId: string): Promise<void>;
}

export interface CommentRepository {
  get(id: string): Promise<Comment | undefined>;
  /** Newest first. */
  list(filter: CommentFilter, page: Page): Promise<Comment[]>;
  count(filter: CommentFilter): Promise<number>;
  insert(comment: Comment): Promise<void>;
  setStatus(id: string, status: Comment['status']): Promise<Comment | undefined>;
  delete(id: string): Promise<boolean>;
  deleteForArticle(articleId: string): Promise<void>;
}

export interface SourceRepository {
  get(id: string): Promise<NewsSource | undefined>;
  list(): Promise<NewsSource[]>;
  insert(source: NewsSource): Promise<void>;
  /** Applies a partial change; answers the updated source or undefined when missing. */
  update(id: string, change: Partial<Omit<NewsSource, 'id'>>): Promise<NewsSource | undefined>;
  delete(id: string): Promise<boolean>;
}

export interface SubscriberRepository {
  getByEmail(email: string): Promise<Subscriber | undefined>;
  getByToken(token: string): Promise<Subscriber | undefined>;
  /** Inserts or re-activates a subscription; idempotent per e-mail. */
  upsert(subscriber: Subscriber): Promise<Subscriber>;
  unsubscribe(token: string, at: string): Promise<Subscriber | undefined>;
  count(): Promise<number>;
}

/**
 * Double opt-in, the briefing's recipients and the dashboard's list, on top of SubscriberRepository
 * (issue 15). A separate interface so an implementation of the basic one still compiles.
 */
export interface SubscriberListRepository extends SubscriberRepository {
  get(id: string): Promise<Subscriber | undefined>;
  /** The pending subscription whose confirmation token hashes to `hash` (SHA-256, hex). */
  getByConfirmTokenHash(hash: string): Promise<Subscriber | undefined>;
  /** Applies a change (undefined values remove the field); answers the updated record or undefined when missing. */
  update(id: string, change: Partial<Omit<Subscriber, 'id' | 'email'>>): Promise<Subscriber | undefined>;
  /** Subscribers matching the filter (e-mail contains q, derived status), newest first, sliced by page. */
  listFiltered(filter: SubscriberFilter, page: Page): Promise<{ items: Subscriber[]; total: number }>;
  countByStatus(): Promise<SubscriberCounts>;
  /** Confirmed, not unsubscribed: who gets the briefing, oldest first (a stable order for resuming). */
  listConfirmed(): Promise<Subscriber[]>;
  delete(id: string): Promise<boolean>;
}

/** The morning briefing's runs and their per-recipient send log. */
export interface BriefingRepository {
  /** Runs of one day (YYYY-MM-DD), oldest first. */
  runsFor(date: string): Promise<BriefingRun[]>;
  /** The most recently started run, if any. */
  latest(): Promise<BriefingRun | undefined>;
  /** Inserts or replaces a run; on disk when it resolves. */
  saveRun(run: BriefingRun): Promise<void>;
  /** Inserts a new run unless one with its id exists; answers whether this call created it (of two servers starting one, one does). */
  startRun(run: BriefingRun): Promise<boolean>;
  /**
   * Records `attempting` for a recipient unless the run's log already holds a state for it other
   * than a failure marked for retry; answers whether this caller may send (of two servers, one may).
   */
  claimDelivery(runId: string, subscriberId: string, at: string): Promise<boolean>;
  /** The send log of a run, by subscriber id. */
  deliveries(runId: string): Promise<Map<string, Delivery>>;
  /** Records recipients' states; on disk (atomic rename) when it resolves. */
  recordDeliveries(runId: string, deliveries: readonly Delivery[]): Promise<void>;
}

export interface UserRepository {
  get(id: string): Promise<User | undefined>;
  getByUsername(username: string): Promise<User | undefined>;
  count(): Promise<number>;
  /** Inserts the user, or replaces the one with the same username. */
  upsert(user: User): Promise<User>;
}

/** Listing and changing users by id for the Users tab (issue 14), on top of UserRepository. */
export interface UserDirectoryRepository extends UserRepository {
  /** Every user, oldest first (a newsroom has tens, not thousands). */
  list(): Promise<User[]>;
  /** Applies a change; answers the updated user or undefined when missing. */
  update(id: string, change: Partial<Omit<User, 'id' | 'username'>>): Promise<User | undefined>;
  delete(id: string): Promise<boolean>;
}

/** The audit log (issue 14): append-only, read newest first. */
export interface AuditRepository {
  /** Appends one entry; on disk when it resolves. Nothing already written is rewritten. */
  append(entry: AuditEntry): Promise<void>;
  /** Newest first, sliced by page, with the total number of entries. */
  list(page: Page): Promise<{ items: AuditEntry[]; total: number }>;
}

/**
 * Reader accounts (issue 48): one record per member, with their subscription and history. A newsroom
 * has up to a few hundred thousand; lookups by id, e-mail and Stripe customer are indexed.
 */
export interface MemberRepository {
  get(id: string): Promise<Member | undefined>;
  /** By e-mail, lower case. */
  getByEmail(email: string): Promise<Member | undefined>;
  getByStripeCustomer(customerId: string): Promise<Member | undefined>;
  /** Inserts a new member; answers false (and stores nothing) when the e-mail is taken. */
  insert(member: Member): Promise<boolean>;
  /**
   * Reads the member, applies `change` and writes the result as one step: another change of the same
   * member, from any server, waits for it (webhooks of one subscription may arrive together). `change`
   * answering undefined writes nothing. Answers the stored member (changed or not), undefined when missing.
   */
  mutate(id: string, change: (member: Member) => Member | undefined): Promise<Member | undefined>;
  delete(id: string): Promise<boolean>;
  /** Members matching the filter (e-mail or name contains q; status at `now`), newest first, sliced by page. */
  list(filter: MemberFilter, page: Page, now: number): Promise<{ items: Member[]; total: number }>;
  /** Every member, oldest first (the Overview's series, db:export). */
  all(): Promise<Member[]>;
  count(): Promise<number>;
}

export interface SessionRepository {
  get(id: string): Promise<Session | undefined>;
  insert(session: Session): Promise<void>;
  setExpiry(id: string, expiresAt: string): Promise<void>;
  delete(id: string): Promise<void>;
  deleteForUser(userId: string): Promise<void>;
  deleteExpired(now: string): Promise<number>;
}

export interface JobRepository {
  /** Adds jobs for paths not already queued (coalescing); answers the number added. */
  enqueue(paths: readonly string[], now: string): Promise<number>;
  /** Oldest first. */
  list(limit: number): Promise<Job[]>;
  /** Removes a job once done, unless it was re-queued after `startedAt` (then it stays). */
  complete(id: string, startedAt: string): Promise<void>;
  /** Counts a failed attempt, keeps its error and moves the job to the back of the queue. */
  fail(id: string, error: string): Promise<void>;
  /** The job with this id, if it is queued. */
  get(id: string): Promise<Job | undefined>;
  /** Jobs that failed at least once since they last ran through (attempts > 0), in queue order. */
  failed(limit: number): Promise<Job[]>;
  size(): Promise<number>;
  /**
   * Takes the job for `owner` until `leaseUntil` (epoch ms) unless another owner holds a lease still
   * running at `now`; answers whether `owner` has it. Several servers on one database claim a job
   * before running it, and a killed server's lease runs out; one process (lowdb) always gets it.
   * `complete` and `fail` give the claim up. PostgreSQL times the lease (leaseUntil - now long) by the
   * database's clock, so servers whose clocks disagree still agree on when it ran out.
   */
  claim(id: string, owner: string, leaseUntil: number, now: number): Promise<boolean>;
}

/** A page one server rendered, kept for the other servers sharing the store (body undefined: removed). */
export type RenderedPage = { path: string; body: Uint8Array | undefined; seq: number; origin: string };
/** What a listener hears of a stored page: which one changed, in which order, and who rendered it. */
export type RenderedPageNote = { path: string; seq: number; origin: string };

/**
 * Rendered pages shared between servers: the server that renders a page stores its bytes once and
 * every other server copies them into its own served folder. A store one process owns (lowdb) keeps
 * nothing (`shared` false) and only tells its own listeners.
 */
export interface RenderedPageRepository {
  /** Whether other processes use this store, and so need the pages this one renders. */
  readonly shared: boolean;
  /** Stores a page (or its removal) and tells every listener, on every server, once it is committed; answers its sequence number. */
  put(path: string, body: Uint8Array | undefined, origin: string): Promise<number>;
  get(path: string): Promise<RenderedPage | undefined>;
  /**
   * Every stored page without its bytes: its SHA-256 (hex; undefined for a removal), oldest change
   * first; with `afterSeq`, only the pages changed after that sequence number.
   */
  list(afterSeq?: number): Promise<{ path: string; seq: number; sha256: string | undefined }[]>;
  /**
   * Deletes the removals (tombstones) stored before `storedBefore` (ms since the epoch); answers how
   * many. A server away longer than that misses them, and its start-up reconcile removes the files.
   */
  pruneRemovals(storedBefore: number): Promise<number>;
  /**
   * Calls `listener` for every page put from now on, by any process; `resync` after a lost
   * connection came back (notes may have been missed meanwhile). Answers the function that stops it.
   */
  listen(listener: (note: RenderedPageNote) => void, resync?: () => void): Promise<() => Promise<void>>;
}

/** Short-lived keyed state for rate limits and login throttling. */
export interface LimitRepository {
  /** Atomically counts a hit in a fixed window; answers the count and when the window resets (ms). */
  hit(key: string, windowMs: number, now: number): Promise<{ count: number; resetAt: number }>;
  get<T>(key: string, now: number): Promise<T | undefined>;
  set<T>(key: string, value: T, expiresAt: number): Promise<void>;
  delete(key: string): Promise<void>;
  /**
   * Reads a key (undefined when missing or expired at `now`), changes it and writes it back as one
   * step: another change of the same key, from any server, waits for it. Answers what was written.
   */
  update<T>(key: string, now: number, change: (current: T | undefined) => { value: T; expiresAt: number }): Promise<T>;
}

/**
 * Page views over time (issue 33): counts per bucket (minute, hour, newsroom day) and dimension.
 * The recorder batches views in memory and adds them here every few seconds.
 */
export interface AnalyticsRepository {
  /**
   * Adds each count to its bucket (creating it); one call is one write per bucket file or one statement.
   * A failure that stored part of them throws PartlyStoredError with the counts that were not.
   */
  addViews(counts: readonly ViewCount[]): Promise<void>;
  /** The buckets of one grain and dimension whose start is in [from, to) (strings compared as stored), only `keys` when given. */
  listViews(grain: ViewGrain, dim: ViewDimension, from: string, to: string, keys?: readonly string[]): Promise<ViewCount[]>;
  /** Removes the buckets of a grain that start before `before`; answers how many buckets (lowdb: files) went. */
  prune(grain: ViewGrain, before: string): Promise<number>;
  /** Every stored count, for db:export and db:import. */
  exportAll(): Promise<ViewCount[]>;
}

/** Settings the application keeps beside its data (secret, render manifest). */
export interface MetaRepository {
  get<T>(key: string): Promise<T | undefined>;
  set<T>(key: string, value: T): Promise<void>;
  /** Stores the value unless the key has one; answers the stored value (two servers creating a secret at once get the same one). */
  setIfAbsent<T>(key: string, value: T): Promise<T>;
}

/** Every repository of a Store, by name (metrics time them all; the storage-fault guard wraps those that write DATA_DIR). */
export const STORE_REPOSITORIES = [
  'articles',
  'counters',
  'comments',
  'sources',
  'subscribers',
  'briefings',
  'users',
  'audit',
  'sessions',
  'jobs',
  'limits',
  'meta',
  'revisions',
  'trash',
  'analytics',
  'pages',
  'live',
  'members',
] as const satisfies readonly (keyof Store)[];

export interface Store {
  /** Identifies this store's data (stable for a DATA_DIR), for the render manifest. */
  readonly id: string;
  readonly articles: ArticleRepository;
  readonly counters: CounterRepository;
  readonly comments: CommentRepository;
  readonly sources: SourceRepository;
  readonly subscribers: SubscriberListRepository;
  readonly briefings: BriefingRepository;
  readonly users: UserDirectoryRepository;
  readonly audit: AuditRepository;
  readonly sessions: SessionRepository;
  readonly jobs: JobRepository;
  readonly limits: LimitRepository;
  readonly meta: MetaRepository;
  readonly revisions: RevisionRepository;
  readonly trash: TrashRepository;
  readonly pages: RenderedPageRepository;
  readonly analytics: AnalyticsRepository;
  readonly live: LiveRepository;
  readonly members: MemberRepository;
  /** Which implementation holds the data (readiness reports it). */
  readonly kind: 'lowdb' | 'postgres';
  /**
   * Whether the store answers and its schema is current (PostgreSQL: every migration applied; lowdb:
   * the folder's layout marker names the layout this version reads); the reason when not. Callers bound it with a timeout.
   */
  check(): Promise<StoreCheck>;
  /**
   * lowdb only: a point-in-time copy of DATA_DIR taken through this store's write gate, for a backup
   * (`ownerPid`: the process that will archive and remove the staging folder). Absent on PostgreSQL.
   */
  snapshotDataDir?(options?: { ownerPid?: number }): Promise<Snapshot>;
  /** Waits for pending writes and releases the lock. */
  close(): Promise<void>;
}

export type SnapshotFile = { path: string; size: number };

/** A point-in-time copy of a data folder, staged for a backup archive. */
export type Snapshot = {
  /** The staging folder (DATA_DIR's files under its `data/`); the caller removes it once its archive is written. */
  dir: string;
  /** Files under it (`data/...`), relative with `/`, in a stable order. */
  files: SnapshotFile[];
  /** How long a running store's writes were held (ms); undefined when the caller held the folder's lock instead. */
  heldMs?: number;
};

export type StoreCheck = { ok: true } | { ok: false; reason: string };

/** Where a store reports what it does on its own (a layout migration, a failed background split): the server's logger fits. */
export type StoreLog = { info(line: string): void; error(line: string): void };

export type StoreMode = 'write' | 'read';

export class StoreLockedError extends Error {
  constructor(dataDir: string, pid: number | undefined) {
    super(
      `Another process${pid ? ` (pid ${pid})` : ''} is using the data folder ${dataDir}. ` +
        'Stop it first, or start this one with a different DATA_DIR.',
    );
    this.name = 'StoreLockedError';
  }
}

/**
 * The store's backing service cannot be reached (the database is down, restarting or does not answer
 * in time): the request may be retried. The server answers it as 503 with Retry-After, never a 500.
 * A brand, not instanceof: the server script and the Astro bundle each load a copy of this module.
 */
export class StoreUnavailableError extends Error {
  readonly isStoreUnavailable = true;
  /** How soon a retry makes sense, in seconds. */
  readonly retryAfterS: number;
  constructor(message: string, options: { retryAfterS: number; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.name = 'StoreUnavailableError';
    this.retryAfterS = options.retryAfterS;
  }
}

export function isStoreUnavailable(error: unknown): error is StoreUnavailableError {
  return typeof error === 'object' && error !== null && (error as { isStoreUnavailable?: unknown }).isStoreUnavailable === true;
}

/**
 * A batch write that stored part of its batch (lowdb writes a batch of views as one file per bucket,
 * and a full disk may refuse some of them): `unstored` is the part to try again, the rest is stored.
 * A brand, not instanceof, as above.
 */
export class PartlyStoredError<T> extends Error {
  readonly isPartlyStored = true;
  readonly unstored: T;
  constructor(unstored: T, cause: unknown) {
    super(`Part of the batch was not stored: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'PartlyStoredError';
    this.unstored = unstored;
  }
}

/** The part of a batch a failed batch write left unstored: all of it unless the store said otherwise. */
export function unstoredPartOf<T>(error: unknown, batch: T): T {
  const partly = typeof error === 'object' && error !== null && (error as { isPartlyStored?: unknown }).isPartlyStored === true;
  return partly ? (error as PartlyStoredError<T>).unstored : batch;
}
