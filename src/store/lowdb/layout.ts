/** Where each record lives on disk (layout 2): one file per article, hashed buckets for every other growing collection. */
import fs from 'node:fs';
import path from 'node:path';
import { JsonCollection, readJsonFile, readJsonFileSync } from './file.ts';

export const LAYOUT_VERSION = 2;
/** Written last by a migration (and first on a fresh folder): its presence says the layout-2 files are complete. */
export const LAYOUT_FILE = 'store.json';

/** FNV-1a, 32 bit: a fast, stable spread of keys over buckets (not a security boundary). */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** MurmurHash3's 32-bit finaliser: every input bit reaches every output bit. */
function mix32(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');

/** A record id as a file name: kept when it is already safe, else base64url behind a `~`. */
function fileNameOf(id: string): string {
  return /^[A-Za-z0-9_-]{1,120}$/.test(id) ? id : `~${Buffer.from(id).toString('base64url')}`;
}

/** articles/<2 hex of hash(id)>/<id>.json: 256 folders, about 400 files each at 100,000 articles. */
export function articleFile(dir: string, id: string): string {
  return path.join(dir, 'articles', hex(hash32(id) & 0xff, 2), `${fileNameOf(id)}.json`);
}

/** Every collection that grows without bound, and how many bucket files it is spread over. */
export const BUCKETS = {
  /** Votes: 64 article groups x 16 visitor buckets; one article's votes sit in 16 files at most. */
  votes: 1024,
  voteAdjustments: 256,
  views: 256,
  comments: 256,
  subscribers: 256,
  sessions: 256,
  jobs: 64,
  members: 256,
} as const;
export type BucketedName = keyof typeof BUCKETS;

const FOLDERS: Record<BucketedName, string> = {
  votes: 'votes',
  voteAdjustments: 'vote-adjustments',
  views: 'views',
  comments: 'comments',
  subscribers: 'subscribers',
  sessions: 'sessions',
  jobs: 'jobs',
  members: 'members',
};

export const VOTE_VISITOR_BUCKETS = 16;
const VOTE_GROUPS = BUCKETS.votes / VOTE_VISITOR_BUCKETS;
const VOTE_BASE_LEVEL = Math.log2(BUCKETS.votes);

/**
 * How far the vote buckets have split (linear hashing): 2^level + next buckets, where the buckets
 * below `next` have split at level + 1. Votes grow without bound, so a fixed number of buckets grows
 * with them (at 1,000,000 votes 1,024 buckets held ~1,000 each, and every vote read and rewrote one):
 * the store splits one bucket whenever the votes pass VOTES_PER_BUCKET per bucket on average, so a
 * vote's bucket stays about the same size whatever the total. `pending` names a bucket whose moved
 * votes may still be in its file (a crash between the split's writes): the next open removes them.
 * The first 1,024 buckets are layout 2's fixed ones, so a folder without the file is at the base.
 */
export type VoteSplit = { level: number; next: number; pending?: number };
export const VOTE_BASE_SPLIT: VoteSplit = { level: VOTE_BASE_LEVEL, next: 0 };
/** A split starts once the stored votes pass this many per bucket on average. */
export const VOTES_PER_BUCKET = 128;

export function voteSplitFile(dir: string): string {
  return path.join(dir, FOLDERS.votes, 'split.json');
}

export function voteBucketCount(split: VoteSplit): number {
  return 2 ** split.level + split.next;
}

/** The smallest split whose buckets hold `votes` at VOTES_PER_BUCKET each (for writers of a whole layout). */
export function voteSplitFor(votes: number): VoteSplit {
  const buckets = Math.max(BUCKETS.votes, Math.ceil(votes / VOTES_PER_BUCKET));
  const level = Math.floor(Math.log2(buckets));
  return { level, next: buckets - 2 ** level };
}

/** The bucket one split further of the bucket a vote is in at `level`: it stays, or moves to bucket + 2^level. */
function voteBucketAt(articleId: string, visitorId: string, level: number): number {
  // The base bucket: the article picks a group of 16, the visitor one of them (layout 2's 1,024 buckets).
  const base = (hash32(articleId) % VOTE_GROUPS) * VOTE_VISITOR_BUCKETS + (hash32(visitorId) % VOTE_VISITOR_BUCKETS);
  if (level <= VOTE_BASE_LEVEL) return base;
  // Beyond the base, bits of the pair: a popular article's votes spread as they grow, too. FNV-1a's
  // low bits follow the low bits of the characters, as the base's do: the finaliser mixes them apart.
  const high = mix32(hash32(`${articleId}\u0000${visitorId}`)) % 2 ** (level - VOTE_BASE_LEVEL);
  return base + high * BUCKETS.votes;
}

/** The vote bucket of (article, visitor) under `split`. */
export function voteBucket(articleId: string, visitorId: string, split: VoteSplit = VOTE_BASE_SPLIT): number {
  const bucket = voteBucketAt(articleId, visitorId, split.level);
  return bucket < split.next ? voteBucketAt(articleId, visitorId, split.level + 1) : bucket;
}

/** Where the bucket `bucket` sends a vote when it splits (itself, or bucket + 2^level). */
export function voteBucketAfterSplit(articleId: string, visitorId: string, split: VoteSplit): number {
  return voteBucketAt(articleId, visitorId, split.level + 1);
}

/** Every bucket an article's votes can be in under `split`: its group's 16 of every 1,024. */
export function voteBucketsOf(articleId: string, split: VoteSplit = VOTE_BASE_SPLIT): number[] {
  const first = (hash32(articleId) % VOTE_GROUPS) * VOTE_VISITOR_BUCKETS;
  const count = voteBucketCount(split);
  const out: number[] = [];
  for (let block = 0; block < count; block += BUCKETS.votes)
    for (let i = 0; i < VOTE_VISITOR_BUCKETS && block + first + i < count; i++) out.push(block + first + i);
  return out;
}

/** The split state on disk (the base when there is no file). */
export function readVoteSplit(dir: string): VoteSplit {
  const data = readJsonFileSync<Partial<VoteSplit>>(voteSplitFile(dir));
  if (!data) return VOTE_BASE_SPLIT;
  const { level, next, pending } = data;
  if (!Number.isInteger(level) || level! < VOTE_BASE_LEVEL || level! > 30 || !Number.isInteger(next) || next! < 0 || next! >= 2 ** level!)
    throw new Error(`Cannot read ${voteSplitFile(dir)}: not a vote split state`);
  return { level: level!, next: next!, ...(Number.isInteger(pending) ? { pending: pending! } : {}) };
}

export function bucketOf(name: BucketedName, key: string): number {
  return hash32(key) % BUCKETS[name];
}

export function bucketFile(dir: string, name: BucketedName, bucket: number): string {
  // Vote buckets get a folder per article group so no folder holds more than 64 files.
  // (Split buckets, from 1,024 on, go on in more folders of 16.)
  if (name === 'votes') return path.join(dir, FOLDERS.votes, hex(bucket >> 4, 2), `${hex(bucket & 15, 1)}.json`);
  return path.join(dir, FOLDERS[name], `${hex(bucket, 3)}.json`);
}

export function collectionFolder(dir: string, name: BucketedName | 'articles'): string {
  return path.join(dir, name === 'articles' ? 'articles' : FOLDERS[name]);
}

/** Runs `task` over `items` with at most `limit` at a time. */
export async function inPool<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** Every JSON file under a folder, recursively (temp files skipped). */
export function listJsonFiles(root: string): string[] {
  const out: string[] = [];
  const visit = (dir: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(full);
      else if (entry.name.endsWith('.json') && !entry.name.startsWith('.')) out.push(full);
    }
  };
  visit(root);
  return out;
}

/**
 * One bucketed collection: BUCKETS[name] JSON files, each an object of records, loaded whole at
 * start; a change rewrites only its bucket (writes to one bucket share a disk write).
 */
export class BucketSet<T> {
  readonly #dir: string;
  readonly #name: BucketedName;
  readonly #readOnly: boolean;
  readonly #empty: () => T;
  readonly #files = new Map<number, JsonCollection<T>>();
  /** Whether a bucket whose write failed goes back to its file (else it keeps the change for its next write). */
  readonly #revert: boolean;
  #onRevert: ((bucket: number, before: T, after: T) => void) | undefined;

  private constructor(dir: string, name: BucketedName, empty: () => T, readOnly: boolean, revert: boolean) {
    this.#dir = dir;
    this.#name = name;
    this.#empty = empty;
    this.#readOnly = readOnly;
    this.#revert = revert;
  }

  /**
   * `keepFailedChanges`: a bucket whose write fails keeps the change in memory, and its next write
   * stores it (the job queue: the work is still done, and repeating it is harmless). By default it
   * goes back to what its file holds, so memory never shows what is not stored.
   */
  static async load<T>(
    dir: string,
    name: BucketedName,
    empty: () => T,
    readOnly: boolean,
    options: { keepFailedChanges?: boolean } = {},
  ): Promise<BucketSet<T>> {
    const set = new BucketSet<T>(dir, name, empty, readOnly, options.keepFailedChanges !== true);
    const files = Array.from({ length: BUCKETS[name] }, (_, b) => b);
    await inPool(files, 32, async (b) => {
      const data = await readJsonFile<T>(bucketFile(dir, name, b));
      if (data !== undefined) set.#files.set(b, set.#collection(b, data as T));
    });
    return set;
  }

  #collection(bucket: number, data: T): JsonCollection<T> {
    const file = bucketFile(this.#dir, this.#name, bucket);
    const revert = {
      reload: () => readJsonFileSync<T>(file) ?? this.#empty(),
      onRevert: (before: T, after: T) => this.#onRevert?.(bucket, before, after),
    };
    return JsonCollection.of<T>(file, data, this.#readOnly, this.#revert ? { revert } : {});
  }

  /** Calls `listener` when a bucket whose write failed went back to its file's content (its owner re-indexes it). */
  onRevert(listener: (bucket: number, before: T, after: T) => void): void {
    this.#onRevert = listener;
  }

  /** The bucket's data, created empty (in memory) when it has no file yet. */
  get(bucket: number): T {
    let file = this.#files.get(bucket);
    if (!file) {
      file = this.#collection(bucket, this.#empty());
      this.#files.set(bucket, file);
    }
    return file.data;
  }

  /** Existing buckets only (for loading indexes at start). */
  *entries(): Iterable<[number, T]> {
    for (const [b, file] of this.#files) yield [b, file.data];
  }

  write(bucket: number): Promise<void> {
    this.get(bucket);
    return this.#files.get(bucket)!.write();
  }

  async settle(): Promise<void> {
    await Promise.all([...this.#files.values()].map((f) => f.settle()));
  }
}

/**
 * Reads every article file under DATA_DIR/articles. Synchronous on purpose: it runs once at start,
 * before the server listens, and 100,000 small reads through the thread pool (open, stat, read,
 * close each) cost several times what plain reads in a loop do.
 */
export function loadArticleFiles<T>(
  dir: string,
  onRecord: (file: string, record: T) => void,
  parse: (bytes: Buffer) => T = (bytes) => JSON.parse(bytes.toString('utf8')) as T,
): void {
  const root = collectionFolder(dir, 'articles');
  let shards: string[];
  try {
    shards = fs.readdirSync(root).filter((s) => !s.startsWith('.'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  for (const shard of shards) {
    for (const name of fs.readdirSync(path.join(root, shard))) {
      if (!name.endsWith('.json') || name.startsWith('.')) continue;
      const file = path.join(root, shard, name);
      const bytes = fs.readFileSync(file);
      try {
        onRecord(file, parse(bytes));
      } catch (error) {
        throw new Error(`Cannot read ${file}: it is not valid JSON (${(error as Error).message})`, { cause: error });
      }
    }
  }
}

/**
 * A bucketed collection too large to hold whole (the votes): at open only a small head of each file
 * is read (`head`); a bucket's full data is read when first needed and kept in an LRU of `cacheSize`
 * buckets. A bucket in use (`use`: loading, being changed, or its write not yet on disk) is pinned
 * and never evicted, so a reload can never read a file older than the data in memory.
 */
/** How a LazyBucketSet makes, reads and writes its buckets, and how many it keeps in memory. */
export type LazyBucketOptions<T> = {
  empty: () => T;
  parse: (bytes: Buffer) => T;
  /** The file text of a bucket (default JSON.stringify). */
  stringify?: (data: T) => string;
  cacheSize: number;
  readOnly: boolean;
};

/** undefined for a file that does not exist (a bucket never written); any other error is thrown again. */
function missingAsUndefined(error: unknown): undefined {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
  throw error;
}

export class LazyBucketSet<T> {
  readonly #dir: string;
  readonly #name: BucketedName;
  readonly #readOnly: boolean;
  readonly #empty: () => T;
  readonly #parse: (bytes: Buffer) => T;
  readonly #stringify: ((data: T) => string) | undefined;
  readonly #cacheSize: number;
  /** Loaded buckets, least recently used first (a Map keeps insertion order). */
  readonly #files = new Map<number, JsonCollection<T>>();
  readonly #loading = new Map<number, Promise<JsonCollection<T>>>();
  readonly #pins = new Map<number, number>();

  private constructor(dir: string, name: BucketedName, options: LazyBucketOptions<T>) {
    this.#dir = dir;
    this.#name = name;
    this.#empty = options.empty;
    this.#parse = options.parse;
    this.#stringify = options.stringify;
    this.#cacheSize = options.cacheSize;
    this.#readOnly = options.readOnly;
  }

  /** Opens the set, calling `onHead` with the head (`head(bytes)`) of every existing bucket file. */
  static async open<T, H>(
    dir: string,
    name: BucketedName,
    options: LazyBucketOptions<T> & { head: (bytes: Buffer) => H; count?: number },
    onHead: (bucket: number, head: H) => void,
  ): Promise<LazyBucketSet<T>> {
    const set = LazyBucketSet.create<T>(dir, name, options);
    await set.readHeads(options.head, options.count ?? BUCKETS[name], onHead);
    return set;
  }

  /** The set without reading any file: buckets are read when used (see readHeads for their heads). */
  static create<T>(dir: string, name: BucketedName, options: LazyBucketOptions<T>): LazyBucketSet<T> {
    return new LazyBucketSet<T>(dir, name, options);
  }

  /** Calls `onHead` with the head (`head(bytes)`) of every existing file among the first `count` buckets. */
  async readHeads<H>(head: (bytes: Buffer) => H, count: number, onHead: (bucket: number, head: H) => void): Promise<void> {
    const buckets = Array.from({ length: count }, (_, b) => b);
    await inPool(buckets, 32, async (b) => {
      const bytes = await this.#readBytes(b);
      if (bytes) onHead(b, this.#decode(b, bytes, head));
    });
  }

  /** For readHeads: every bucket's bytes, many files at a time through libuv's pool (a cold start reads them from disk). */
  async #readBytes(bucket: number): Promise<Buffer | undefined> {
    return fs.promises.readFile(bucketFile(this.#dir, this.#name, bucket)).catch(missingAsUndefined);
  }

  /**
   * On use: the bucket's bytes read on the calling thread. A bucket is a few kilobytes and is read
   * again on every use (VOTE_BUCKET_CACHE), so it is in the page cache: one read costs tens of
   * microseconds, where the four round trips of fs.promises.readFile (open, fstat, read, close)
   * through libuv's pool each wake a pool thread, which on a busy core takes it from the event loop.
   */
  #readBytesNow(bucket: number): Buffer | undefined {
    try {
      return fs.readFileSync(bucketFile(this.#dir, this.#name, bucket));
    } catch (error) {
      return missingAsUndefined(error);
    }
  }

  /** The bucket as its file holds it now (empty when there is none). */
  #readNow(bucket: number): T {
    const bytes = this.#readBytesNow(bucket);
    return bytes ? this.#decode(bucket, bytes, this.#parse) : this.#empty();
  }

  /** A bucket's collection: a write that fails reads the bucket back from its file (the caller undoes what it kept beside it). */
  #collection(bucket: number, data: T): JsonCollection<T> {
    return JsonCollection.of<T>(bucketFile(this.#dir, this.#name, bucket), data, this.#readOnly, {
      ...(this.#stringify ? { stringify: this.#stringify } : {}),
      revert: { reload: () => this.#readNow(bucket) },
    });
  }

  #decode<R>(bucket: number, bytes: Buffer, parse: (bytes: Buffer) => R): R {
    try {
      return parse(bytes);
    } catch (error) {
      const file = bucketFile(this.#dir, this.#name, bucket);
      throw new Error(`Cannot read ${file}: it is not valid JSON (${(error as Error).message})`, { cause: error });
    }
  }

  /**
   * Runs `task` with the bucket's data (read from its file if it is not in memory; concurrent callers
   * share one read). `task` changes the data synchronously and calls `write` to persist it; the
   * bucket stays pinned until what `task` returns has settled.
   */
  async use<R>(bucket: number, task: (data: T, write: () => Promise<void>) => R | Promise<R>): Promise<R> {
    this.#pins.set(bucket, (this.#pins.get(bucket) ?? 0) + 1);
    try {
      const file = await this.#load(bucket);
      return await task(file.data, () => file.write());
    } finally {
      const pins = this.#pins.get(bucket)! - 1;
      if (pins > 0) this.#pins.set(bucket, pins);
      else this.#pins.delete(bucket);
      this.#evict();
    }
  }

  async #load(bucket: number): Promise<JsonCollection<T>> {
    const cached = this.#files.get(bucket);
    if (cached) {
      // Most recently used goes last.
      this.#files.delete(bucket);
      this.#files.set(bucket, cached);
      return cached;
    }
    let loading = this.#loading.get(bucket);
    if (!loading) {
      loading = (async () => {
        const file = this.#collection(bucket, this.#readNow(bucket));
        this.#files.set(bucket, file);
        return file;
      })().finally(() => this.#loading.delete(bucket));
      this.#loading.set(bucket, loading);
    }
    return loading;
  }

  /**
   * Makes `data` the content of `bucket`, a bucket nothing has used yet (a split's new half): writes
   * its file and keeps it in memory, replacing whatever file a failed split left there.
   */
  async adopt(bucket: number, data: T): Promise<void> {
    this.#files.set(bucket, this.#collection(bucket, data));
    // use() pins it before anything can evict it, and finds it in memory.
    await this.use(bucket, (_data, write) => write());
  }

  /** Drops the least recently used unpinned buckets beyond the cache size. */
  #evict(): void {
    if (this.#files.size <= this.#cacheSize) return;
    for (const bucket of this.#files.keys()) {
      if (this.#files.size <= this.#cacheSize) break;
      if (!this.#pins.has(bucket)) this.#files.delete(bucket);
    }
  }

  /** How many buckets are in memory (for tests and probes). */
  get loadedCount(): number {
    return this.#files.size;
  }

  async settle(): Promise<void> {
    await Promise.all([...this.#files.values()].map((f) => f.settle()));
  }
}
