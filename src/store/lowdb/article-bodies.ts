/** Article bodies kept out of memory: read from the article's own file when asked for, with a small LRU of recent ones. */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import type { ArticleRecord } from '../../schemas/article.ts';
import { articleFile } from './layout.ts';

const BODY_KEY = Buffer.from('"bodyHtml":"');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Parses an article file without its body: the body's bytes are cut out before decoding, so a start
 * neither decodes nor parses the bodies, most of the store's bytes (it still reads the files; docs/performance.md, 2026-11-23).
 * `bodyHtml` comes back as ''; anything unexpected falls back to a full parse.
 */
export function parseArticleWithoutBody(bytes: Buffer): ArticleRecord {
  const key = bytes.indexOf(BODY_KEY);
  if (key >= 0) {
    const start = key + BODY_KEY.length;
    // The closing quote: the first one not escaped (preceded by an even run of backslashes).
    let end = bytes.indexOf(QUOTE, start);
    while (end > 0) {
      let slashes = 0;
      while (bytes[end - 1 - slashes] === BACKSLASH) slashes++;
      if (slashes % 2 === 0) break;
      end = bytes.indexOf(QUOTE, end + 1);
    }
    if (end > 0) {
      const record = JSON.parse(`${bytes.toString('utf8', 0, start)}${bytes.toString('utf8', end)}`) as ArticleRecord;
      // The cut was the record's own body (not a nested key): it reads as the empty string we left.
      if (record.bodyHtml === '') return record;
    }
  }
  return JSON.parse(bytes.toString('utf8')) as ArticleRecord;
}

/** The body of an article file's text. */
function bodyOf(text: string): string {
  return (JSON.parse(text) as ArticleRecord).bodyHtml ?? '';
}

/**
 * Fields whose values many records share (a handful of statuses and sections, the desk's authors,
 * sources and tags): kept as one string per value instead of one per record. At 100,000 articles
 * they were a million of the heap's 1.5 million strings, each one more object for every full garbage
 * collection to mark.
 */
const SHARED_VALUES = new Set(['status', 'section', 'authorName', 'sourceLabel', 'createdBy']);

/** Recently read or written bodies kept (about 8 KB each): the front page's articles stay warm. */
const CACHE_SIZE = 1_000;

/**
 * The bodies are most of the store's bytes (docs/performance.md, 2026-11-23 entry on store layout 2); the indexes need none of them.
 * A record keeps `bodyHtml` as an accessor at its usual place among the keys, so callers,
 * `JSON.stringify` and `structuredClone` see an ordinary record; reading it costs one small
 * synchronous file read on a cache miss (tens of microseconds from the page cache, about a millisecond
 * from disk), paid only by the page that shows it, which asks for it ahead (`load`, ArticleRead).
 */
export class ArticleBodies {
  readonly #dir: string;
  readonly #cache = new Map<string, string>();
  /** Bodies whose file write has not finished yet: the file still holds the previous one. */
  readonly #pinned = new Map<string, { body: string; writes: number }>();
  readonly #descriptor: PropertyDescriptor;
  /** One string per shared value (SHARED_VALUES, tags): as many entries as distinct values. */
  readonly #shared = new Map<string, string>();
  /** Counts body changes (hold, revert, forget): a file read that began before one is not remembered. */
  #changes = 0;

  constructor(dir: string) {
    this.#dir = dir;
    const read = (id: string) => this.#read(id);
    // One getter and one setter shared by every record, so V8 shares their shapes too.
    this.#descriptor = {
      enumerable: true,
      configurable: true,
      get(this: ArticleRecord) {
        return read(this.id);
      },
      set(this: ArticleRecord, value: string) {
        Object.defineProperty(this, 'bodyHtml', { value, writable: true, enumerable: true, configurable: true });
      },
    };
  }

  #share(value: string): string {
    const shared = this.#shared.get(value);
    if (shared !== undefined) return shared;
    this.#shared.set(value, value);
    return value;
  }

  #remember(id: string, body: string): void {
    this.#cache.delete(id);
    this.#cache.set(id, body);
    if (this.#cache.size > CACHE_SIZE) this.#cache.delete(this.#cache.keys().next().value!);
  }

  #read(id: string): string {
    const pinned = this.#pinned.get(id);
    if (pinned) return pinned.body;
    const cached = this.#cache.get(id);
    if (cached !== undefined) {
      this.#remember(id, cached);
      return cached;
    }
    let body = '';
    try {
      body = bodyOf(fs.readFileSync(articleFile(this.#dir, id), 'utf8'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    this.#remember(id, body);
    return body;
  }

  /**
   * Reads `id`'s body into the cache without blocking the thread, so that its next access is a cache hit:
   * at 100,000 articles most files are no longer in the page cache, and a synchronous read held a whole
   * re-render's main thread (docs/performance.md, 2026-11-29). A body changed meanwhile is not remembered.
   */
  async load(id: string): Promise<void> {
    if (this.#pinned.has(id) || this.#cache.has(id)) return;
    const changes = this.#changes;
    const text = await fsp.readFile(articleFile(this.#dir, id), 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
      return undefined;
    });
    if (text !== undefined && changes === this.#changes) this.#remember(id, bodyOf(text));
  }

  /**
   * A copy of a record read from disk whose body stays on disk (its string is dropped), with the
   * accessor in the body's place. Built as a new object, key by key: redefining the parsed data
   * property as an accessor turned every record into a dictionary-mode object, larger each (and that
   * much more for every full garbage collection to mark: docs/performance.md, 2026-11-26); built this
   * way, records with the same keys share one hidden class.
   */
  detach<T extends ArticleRecord>(record: T): T {
    const detached: Record<string, unknown> = {};
    for (const key of Object.keys(record)) {
      const value = record[key as keyof T];
      if (key === 'bodyHtml') Object.defineProperty(detached, key, this.#descriptor);
      else if (typeof value === 'string' && SHARED_VALUES.has(key)) detached[key] = this.#share(value);
      else if (key === 'tags' && Array.isArray(value))
        detached[key] = value.map((tag: unknown) => (typeof tag === 'string' ? this.#share(tag) : tag));
      else detached[key] = value;
    }
    if (!Object.hasOwn(detached, 'bodyHtml')) Object.defineProperty(detached, 'bodyHtml', this.#descriptor);
    return detached as T;
  }

  /**
   * The same for a record about to be written (its body a plain string): its body is held (pinned)
   * until `written` says the file has it, so a read in between never sees the previous file's body.
   */
  hold<T extends ArticleRecord>(record: T): T {
    const body = record.bodyHtml;
    const pinned = this.#pinned.get(record.id);
    if (pinned) {
      pinned.body = body;
      pinned.writes++;
    } else this.#pinned.set(record.id, { body, writes: 1 });
    this.#changes++;
    return this.detach(record);
  }

  /** One write begun by `hold` is on disk (or failed: the pin goes either way, the file is the truth). */
  written(id: string): void {
    const pinned = this.#pinned.get(id);
    if (!pinned) return;
    if (--pinned.writes > 0) return;
    this.#pinned.delete(id);
    this.#remember(id, pinned.body);
  }

  /**
   * A record leaving the indexes (replaced or deleted) gets its body back as a plain value: a caller
   * still holding it (a conflict answer, a revision diff) keeps the text it read, not the next one.
   */
  freeze(record: ArticleRecord): void {
    const body = record.bodyHtml;
    Object.defineProperty(record, 'bodyHtml', { value: body, writable: true, enumerable: true, configurable: true });
  }

  /**
   * A write of `id` failed and its record went back to its file's: reads get `body` (the file's)
   * while earlier writes still hold the pin, and the cache forgets the body that was not stored.
   */
  revert(id: string, body: string): void {
    const pinned = this.#pinned.get(id);
    if (pinned) pinned.body = body;
    this.#cache.delete(id);
    this.#changes++;
  }

  /** Forgets a deleted article's cached body. */
  forget(id: string): void {
    this.#cache.delete(id);
    this.#changes++;
  }
}
