/**
 * The static file server's memory: hot files with their brotli and gzip twins, ready-made headers per
 * encoding, and content negotiation, so a request for a hot file does no filesystem work at all.
 */
import type fs from 'node:fs';
import fsp from 'node:fs/promises';
import type http from 'node:http';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { LRUCache } from 'lru-cache';
import Negotiator from 'negotiator';
import etag from 'etag';
import fresh from 'fresh';
import mime from 'mime-types';
import { ENCODINGS, isCompressible, twinMatches, type Encoding } from '../server/publishing/compress.ts';

/**
 * Where we answer differently from `mime-types`: feeds and sitemaps say their charset (mime-db has
 * none for XML, and feed readers guess otherwise), and the favicon keeps the type browsers and our
 * tests know (mime-db says image/vnd.microsoft.icon).
 */
const TYPE_OVERRIDES: Record<string, string> = {
  '.xml': 'application/xml; charset=utf-8',
  '.ico': 'image/x-icon',
};

/** The Content-Type of a served file, from its extension (text types with `charset=utf-8`). */
export function contentTypeOf(file: string): string {
  const extension = path.extname(file).toLowerCase();
  return TYPE_OVERRIDES[extension] ?? (mime.contentType(extension) || 'application/octet-stream');
}

/** Whether the client's copy is current (If-None-Match first, else If-Modified-Since), as `fresh` decides. */
function isNotModified(headers: http.IncomingHttpHeaders, etag: string, mtimeMs: number): boolean {
  return fresh(headers, { etag, 'last-modified': new Date(mtimeMs).toUTCString() });
}

/** One representation of a file (identity, br or gzip): its bytes and its complete answer headers. */
type Representation = {
  body: Buffer;
  etag: string;
  /** Flat [name, value, ...] lists, built once: writeHead takes them as they are. */
  ok: string[];
  notModified: string[];
};

type Entry = {
  file: string;
  ino: number;
  size: number;
  mtimeMs: number;
  /** When the file was last seen to be this one (ms clock). */
  checkedAt: number;
  identity: Representation;
  twins: Partial<Record<Encoding, Representation>>;
  /** Which twins exist: bit 1 br, bit 2 gzip; indexes the negotiation memo. */
  mask: number;
  bytes: number;
};

/** A file too large to hold: streamed from the descriptor that was opened. */
export type LargeFile = { large: fsp.FileHandle; stat: fs.Stats; file: string };

export type StaticFilesOptions = {
  /** Memory budget for file bodies, in bytes. */
  maxBytes: number;
  /** Files larger than this are streamed from disk (identity only) instead of held. */
  maxFileBytes?: number;
  /** How long a held file is trusted before one stat checks it is still the file on disk. */
  revalidateMs?: number;
  /** Headers every answer carries (security headers). */
  baseHeaders: Record<string, string>;
};

const AVAILABLE: readonly (readonly string[])[] = [['identity'], ['br', 'identity'], ['gzip', 'identity'], ['br', 'gzip', 'identity']];
/** When a client rates encodings equally ("gzip, deflate, br"), the smaller one wins. */
const PREFERRED = ['br', 'gzip', 'identity'];
const MEMO_LIMIT = 512;

/** Whether the request scanHeaders last read carries If-None-Match or If-Modified-Since. */
let conditional = false;

/**
 * The Accept-Encoding of a request, read from its raw header list, and whether it is conditional:
 * Node builds `req.headers` (an object) only when asked, and most requests never need it.
 */
function scanHeaders(raw: string[]): string | undefined {
  conditional = false;
  let accept: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const length = name.length;
    if (length === 15) {
      if (name.toLowerCase() === 'accept-encoding') accept = accept === undefined ? raw[i + 1] : `${accept}, ${raw[i + 1]}`;
    } else if (length === 13 || length === 17) {
      const lower = name.toLowerCase();
      if (lower === 'if-none-match' || lower === 'if-modified-since') conditional = true;
    }
  }
  return accept;
}

export class StaticFiles {
  readonly #lru: LRUCache<string, Entry>;
  /** URL path -> file it resolved to; bounded, because every spelling of a path is a key. */
  readonly #files = new Map<string, string>();
  /** Accept-Encoding value -> chosen encoding, one memo per set of available twins. */
  readonly #negotiated = AVAILABLE.map(() => new Map<string, Encoding | 'identity'>());
  readonly #maxFileBytes: number;
  readonly #revalidateMs: number;
  readonly #base: string[];
  #generation = 0;

  constructor(options: StaticFilesOptions) {
    this.#lru = new LRUCache<string, Entry>({
      maxSize: Math.max(1, options.maxBytes),
      sizeCalculation: (entry) => Math.max(1, entry.bytes),
    });
    // With no memory budget files are still read with their twins per request, just not kept.
    this.#maxFileBytes = options.maxFileBytes ?? 2 * 1024 * 1024;
    this.#revalidateMs = options.revalidateMs ?? 1000;
    this.#base = Object.entries(options.baseHeaders).flat();
  }

  /** The held entry for a URL path, if it is held and was checked recently enough: no I/O. */
  lookup(urlPath: string, now: number): Entry | undefined {
    const file = this.#files.get(urlPath);
    if (file === undefined) return undefined;
    const entry = this.#lru.get(file);
    if (entry === undefined || now - entry.checkedAt > this.#revalidateMs) return undefined;
    return entry;
  }

  /** Drops what is held for a file, or for every file under a folder (a swapped search index, a swapped site). */
  invalidate(fileOrFolder: string): void {
    this.#generation++;
    this.#lru.delete(fileOrFolder);
    const prefix = fileOrFolder.endsWith(path.sep) ? fileOrFolder : fileOrFolder + path.sep;
    for (const key of [...this.#lru.keys()]) if (key.startsWith(prefix)) this.#lru.delete(key);
  }

  clear(): void {
    this.#generation++;
    this.#lru.clear();
    this.#files.clear();
  }

  get heldBytes(): number {
    return this.#lru.calculatedSize;
  }

  /**
   * The entry for `file` reached through `urlPath`: the held one when the file on disk is still the
   * same (one stat), else read afresh with its twins. Answers a stream source instead for a large file,
   * and undefined when there is no such file (any more).
   */
  async load(urlPath: string, file: string, cacheControl: string): Promise<Entry | LargeFile | undefined> {
    const held = this.#lru.get(file);
    const generation = this.#generation;
    if (held) {
      const stat = await fsp.stat(file).catch(() => undefined);
      if (stat && stat.isFile() && stat.ino === held.ino && stat.size === held.size && stat.mtimeMs === held.mtimeMs) {
        held.checkedAt = Date.now();
        this.#remember(urlPath, file);
        return held;
      }
      this.#lru.delete(file);
    }
    let handle: fsp.FileHandle;
    try {
      handle = await fsp.open(file, 'r');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') return undefined;
      throw error;
    }
    let stat: fs.Stats;
    let body: Buffer;
    try {
      stat = await handle.stat();
      if (!stat.isFile()) {
        await handle.close();
        return undefined;
      }
      if (stat.size > this.#maxFileBytes) return { large: handle, stat, file };
      // Read from the descriptor: a page renamed over this path meanwhile does not mix into it.
      body = await handle.readFile();
    } catch (error) {
      await handle.close().catch(() => {});
      throw error;
    }
    await handle.close();
    const entry = await this.#build(file, stat, body, cacheControl);
    // A file replaced while it was read is served this once and read again next time.
    if (generation === this.#generation) {
      this.#lru.set(file, entry);
      this.#remember(urlPath, file);
    }
    return entry;
  }

  #remember(urlPath: string, file: string): void {
    if (this.#files.size >= 50_000) this.#files.clear();
    this.#files.set(urlPath, file);
  }

  async #build(file: string, stat: fs.Stats, body: Buffer, cacheControl: string): Promise<Entry> {
    const type = contentTypeOf(file);
    const vary = isCompressible(file);
    const lastModified = new Date(stat.mtimeMs).toUTCString();
    // A content hash: two versions of a page written in the same millisecond still differ.
    const hash = createHash('sha256').update(body).digest('base64url').slice(0, 22);
    const representation = (bytes: Buffer, encoding: Encoding | 'identity'): Representation => {
      const etag = encoding === 'identity' ? `"${hash}"` : `"${hash}-${encoding}"`;
      const common = [...this.#base, 'Cache-Control', cacheControl, 'ETag', etag, 'Last-Modified', lastModified];
      if (vary) common.push('Vary', 'Accept-Encoding');
      const ok = [...common, 'Content-Type', type, 'Content-Length', String(bytes.byteLength)];
      if (encoding !== 'identity') ok.push('Content-Encoding', encoding);
      return { body: bytes, etag, ok, notModified: common };
    };
    const entry: Entry = {
      file,
      ino: stat.ino,
      size: stat.size,
      mtimeMs: stat.mtimeMs,
      checkedAt: Date.now(),
      identity: representation(body, 'identity'),
      twins: {},
      mask: 0,
      bytes: body.byteLength,
    };
    if (vary) {
      for (const [index, { name, suffix }] of ENCODINGS.entries()) {
        const twin = await fsp.readFile(file + suffix).catch(() => undefined);
        // Only a twin made from exactly these bytes: one written before or after them is not this page.
        if (!twin || !(await twinMatches(name, twin, body))) continue;
        entry.twins[name] = representation(twin, name);
        entry.mask |= 1 << index;
        entry.bytes += twin.byteLength;
      }
    }
    return entry;
  }

  /** The representation a request asks for, by its Accept-Encoding q-values (negotiator), memoised per header value. */
  pick(entry: Entry, acceptEncoding: string | undefined): Representation {
    if (entry.mask === 0) return entry.identity;
    const memo = this.#negotiated[entry.mask]!;
    const key = acceptEncoding ?? '';
    let chosen = memo.get(key);
    if (chosen === undefined) {
      // negotiator 1.x takes the tie-break order as a second argument (its type definitions predate it).
      const negotiator = new Negotiator({ headers: { 'accept-encoding': key } }) as unknown as {
        encoding(available: string[], options: { preferred: string[] }): string | undefined;
      };
      const found = negotiator.encoding([...AVAILABLE[entry.mask]!], { preferred: PREFERRED });
      chosen = found === 'br' || found === 'gzip' ? found : 'identity';
      if (memo.size >= MEMO_LIMIT) memo.clear();
      memo.set(key, chosen);
    }
    return chosen === 'identity' ? entry.identity : (entry.twins[chosen] ?? entry.identity);
  }

  /** Answers GET/HEAD for a held entry: 200 with the chosen representation, or 304 for a current validator. */
  respond(req: http.IncomingMessage, res: http.ServerResponse, entry: Entry): void {
    const chosen = this.pick(entry, scanHeaders(req.rawHeaders));
    if (conditional && isNotModified(req.headers, chosen.etag, entry.mtimeMs)) {
      res.writeHead(304, chosen.notModified);
      res.end();
      return;
    }
    res.writeHead(200, chosen.ok);
    if (req.method === 'HEAD') res.end();
    else res.end(chosen.body);
  }

  /** Streams a file too large to hold, identity only, from the descriptor that was opened. */
  async respondLarge(req: http.IncomingMessage, res: http.ServerResponse, source: LargeFile, cacheControl: string): Promise<void> {
    const { large: handle, stat } = source;
    let streaming = false;
    try {
      // A weak validator from size and mtime, as `send` makes one, for files too large to hash in memory.
      const tag = etag(stat, { weak: true });
      const common = [...this.#base, 'Cache-Control', cacheControl, 'ETag', tag, 'Last-Modified', stat.mtime.toUTCString()];
      if (isNotModified(req.headers, tag, stat.mtimeMs)) {
        res.writeHead(304, common);
        res.end();
        return;
      }
      res.writeHead(200, [...common, 'Content-Type', contentTypeOf(source.file), 'Content-Length', String(stat.size)]);
      if (req.method === 'HEAD' || stat.size === 0) {
        res.end();
        return;
      }
      streaming = true;
      await pipeline(handle.createReadStream({ start: 0, end: stat.size - 1, autoClose: true }), res).catch(() => {
        // The reader went away mid-file: nothing to answer any more.
      });
    } finally {
      if (!streaming) await handle.close();
    }
  }
}
