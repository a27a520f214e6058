/**
 * Brotli and gzip twins of served text files (`page.html.br`, `page.html.gz`), made when the file is
 * written (build, regeneration, rebuild, search index) so that no request pays for compressing.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { threadCpuMicros } from '../thread-cpu.ts';

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);
const unbrotli = promisify(zlib.brotliDecompress);
const gunzip = promisify(zlib.gunzip);

/** The encodings a served file may have a twin in, and the suffix of that twin. */
export const ENCODINGS = [
  { name: 'br', suffix: '.br' },
  { name: 'gzip', suffix: '.gz' },
] as const;
export type Encoding = (typeof ENCODINGS)[number]['name'];

/** Text formats worth compressing: HTML, JavaScript, CSS, XML (feeds, sitemaps), JSON, SVG, plain text. */
const COMPRESSIBLE = /\.(?:html?|m?js|css|xml|json|webmanifest|map|svg|txt)$/i;

/** Below this a compressed answer saves less than its headers cost (nginx's gzip_min_length is 20; Akamai uses 860). */
export const MIN_COMPRESS_BYTES = 256;

export function isCompressible(file: string): boolean {
  return COMPRESSIBLE.test(file);
}

/** Whether a body gets twins at all: a compressible type, and big enough to gain from it. */
function worthCompressing(file: string, body: Uint8Array): boolean {
  return isCompressible(file) && body.byteLength >= MIN_COMPRESS_BYTES;
}

/** Whether a name is a compressed twin, which is never served under its own name. */
export function isCompressedTwin(file: string): boolean {
  return file.endsWith('.br') || file.endsWith('.gz');
}

/**
 * How hard a file is compressed, by how often readers fetch it against how often it is written
 * (docs/performance.md, 2026-12-02, on compression levels by kind of page):
 * - `asset`: content-hashed scripts and styles and Pagefind's files, written once per build or index
 *   and fetched by every reader: the smallest twins whatever they cost.
 * - `front`: the section fronts, a dozen pages most readers open first: brotli 11 saves 10% of their
 *   bytes for about 40 ms a page, paid once a publish.
 * - `current`: every other page, feed and file: brotli 5 and gzip 6 (gzip 9 saves 0.2% for 11% more CPU).
 * - `archive`: stories published over a week ago and listing pages past the first, most of the pages
 *   a template change redraws and the fewest readers fetch: 40% less CPU for 11% more brotli bytes.
 */
export type CompressionTier = 'asset' | 'front' | 'current' | 'archive';

export const COMPRESSION_LEVELS: Record<CompressionTier, { brotli: number; gzip: number }> = {
  asset: { brotli: 11, gzip: 9 },
  front: { brotli: 11, gzip: 9 },
  current: { brotli: 5, gzip: 6 },
  archive: { brotli: 3, gzip: 4 },
};

/** A story older than this is archive (a week: the stories a front page and the feeds still link to are newer). */
export const ARCHIVE_AFTER_MS = 7 * 24 * 60 * 60 * 1000;

/** Where an article page's head says when it was published (Open Graph), within its first bytes. */
const PUBLISHED_TIME = /<meta property="article:published_time" content="([^"]+)"/;
const HEAD_BYTES = 16_384;

/** The tier of a served file, by its path under the served folder and, for a story, its publication time. */
export function compressionTier(file: string, body: Uint8Array, now = Date.now()): CompressionTier {
  if (/[\\/](?:_astro|pagefind)[\\/]/.test(file)) return 'asset';
  if (/[\\/]section[\\/][^\\/]+[\\/]index\.html$/.test(file)) return 'front';
  if (/[\\/](?:section|tag|author)[\\/][^\\/]+[\\/]page[\\/]\d+[\\/]index\.html$/.test(file)) return 'archive';
  if (/[\\/]article[\\/][^\\/]+[\\/]index\.html$/.test(file)) {
    const head = Buffer.from(body.buffer, body.byteOffset, Math.min(body.byteLength, HEAD_BYTES)).toString('latin1');
    const published = Date.parse(PUBLISHED_TIME.exec(head)?.[1] ?? '');
    if (now - published > ARCHIVE_AFTER_MS) return 'archive';
  }
  return 'current';
}

/** A file's compressed twins, keyed by encoding (only those smaller than the file). */
export type Twins = Partial<Record<Encoding, Buffer>>;
/** Makes the twins of a file's body: in libuv's pool (compressBody), or wherever a caller runs it. */
export type Compressor = (file: string, body: Uint8Array) => Promise<Twins>;

function brotliOptions(quality: number, body: Uint8Array): zlib.BrotliOptions {
  return {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: quality,
      [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength,
    },
  };
}

function smallerThan(body: Uint8Array, br: Buffer, gz: Buffer): Twins {
  const out: Twins = {};
  if (br.byteLength < body.byteLength) out.br = br;
  if (gz.byteLength < body.byteLength) out.gzip = gz;
  return out;
}

/** The compressed twins of `body` (only those smaller than it), keyed by encoding, made in libuv's pool. */
export async function compressBody(file: string, body: Uint8Array): Promise<Twins> {
  if (!worthCompressing(file, body)) return {};
  const levels = COMPRESSION_LEVELS[compressionTier(file, body)];
  const [br, gz] = await Promise.all([brotli(body, brotliOptions(levels.brotli, body)), gzip(body, { level: levels.gzip })]);
  return smallerThan(body, br, gz);
}

/**
 * compressBody on the calling thread, for the render thread, whose whole job is background work like
 * this; with the thread's CPU time each encoding took (µs), for the rebuild's CPU budget.
 */
export function compressBodySync(file: string, body: Uint8Array): { twins: Twins; cpu: { brotli: number; gzip: number } } {
  if (!worthCompressing(file, body)) return { twins: {}, cpu: { brotli: 0, gzip: 0 } };
  const levels = COMPRESSION_LEVELS[compressionTier(file, body)];
  const started = threadCpuMicros();
  const br = zlib.brotliCompressSync(body, brotliOptions(levels.brotli, body));
  const brotliDone = threadCpuMicros();
  const gz = zlib.gzipSync(body, { level: levels.gzip });
  return { twins: smallerThan(body, br, gz), cpu: { brotli: brotliDone - started, gzip: threadCpuMicros() - brotliDone } };
}

/**
 * A compressor that makes the twins of a body once and hands the same twins out for the same body
 * again (by content and compression tier), keeping the last `max` bodies. For files written over and
 * over unchanged: Pagefind puts the same script files in every bundle it builds, and at quality 11
 * their twins cost CPU for every bundle, on the cores that answer readers (docs/performance.md, 2026-11-26).
 */
export function reusingTwins(compress: Compressor = compressBody, max = 16): Compressor {
  const made = new Map<string, Promise<Twins>>();
  return (file, body) => {
    if (!worthCompressing(file, body)) return Promise.resolve({});
    const key = `${compressionTier(file, body)}:${createHash('sha256').update(body).digest('base64url')}`;
    let twins = made.get(key);
    if (twins) {
      made.delete(key);
    } else {
      twins = compress(file, body);
      twins.catch(() => made.delete(key));
    }
    // Most recently used last, so the first key is the one to drop.
    made.set(key, twins);
    if (made.size > max) made.delete(made.keys().next().value!);
    return twins;
  };
}

/** Whether `twin` decodes to exactly `identity`: a twin is served only for the file it was made from. */
export async function twinMatches(encoding: Encoding, twin: Uint8Array, identity: Uint8Array): Promise<boolean> {
  try {
    const decoded = encoding === 'br' ? await unbrotli(twin) : await gunzip(twin);
    return Buffer.compare(decoded, identity) === 0;
  } catch {
    return false;
  }
}

/** A file written whole under a dot-named temp name beside `target` (never served), not yet in place. */
export type StagedFile = { target: string; temp: string };

/** Writes `body` beside `target` under a temp name; a failure (a full disk) leaves no temp file behind. */
export async function stageFile(target: string, body: Uint8Array): Promise<StagedFile> {
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`);
  try {
    await fs.writeFile(temp, body);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
  return { target, temp };
}

/** Writes `body` to a dot-named temp file beside `target` (never served) and renames it over `target`. */
export async function renameIntoPlace(target: string, body: Uint8Array): Promise<void> {
  const staged = await stageFile(target, body);
  try {
    await fs.rename(staged.temp, target);
  } catch (error) {
    await fs.rm(staged.temp, { force: true });
    throw error;
  }
}

/** Twins made and written under temp names: `commit` renames them into place, `abort` removes what is left of them. */
export type StagedTwins = { twins: Twins; commit: () => Promise<void>; abort: () => Promise<void> };

/**
 * Makes the twins of `file` for `body` and writes each under a temp name, so a full disk stops the
 * write before any twin changes. `commit` renames them over the old ones and removes those `body` no
 * longer warrants.
 */
export async function stageTwins(file: string, body: Uint8Array, compress: Compressor = compressBody): Promise<StagedTwins> {
  const twins = await compress(file, body);
  const staged = new Map<Encoding, StagedFile>();
  const abort = async () => {
    await Promise.all([...staged.values()].map(({ temp }) => fs.rm(temp, { force: true })));
  };
  try {
    for (const { name, suffix } of ENCODINGS) {
      const twin = twins[name];
      if (twin) staged.set(name, await stageFile(file + suffix, twin));
    }
  } catch (error) {
    await abort();
    throw error;
  }
  const commit = async () => {
    for (const { name, suffix } of ENCODINGS) {
      const twin = staged.get(name);
      if (twin) await fs.rename(twin.temp, twin.target);
      else await fs.rm(file + suffix, { force: true });
    }
  };
  return { twins, commit, abort };
}

/**
 * Brings the twins of `file` in line with `body`: each written atomically (temp + rename), and
 * removed when `body` no longer warrants one. Called before the identity file is renamed into place.
 */
export async function writeTwins(file: string, body: Uint8Array, compress: Compressor = compressBody): Promise<Twins> {
  const staged = await stageTwins(file, body, compress);
  try {
    await staged.commit();
  } catch (error) {
    await staged.abort();
    throw error;
  }
  return staged.twins;
}

/** Removes the twins of a removed file. */
export async function removeTwins(file: string): Promise<void> {
  await Promise.all(ENCODINGS.map(({ suffix }) => fs.rm(file + suffix, { force: true })));
}

/** Every file under `dir` (dot folders, such as a half-written search index, skipped). */
async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const entries = await fs.readdir(dir, { withFileTypes: true, recursive: true });
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    if (
      path
        .relative(dir, full)
        .split(path.sep)
        .some((part) => part.startsWith('.') && part !== '.well-known')
    )
      continue;
    out.push(full);
  }
  return out;
}

export type CompressTreeResult = { files: number; bytes: number; brotliBytes: number; gzipBytes: number; ms: number };

/** Writes the twins of every compressible file under `dir` (the post-build step, and Pagefind's output). */
export async function compressTree(
  dir: string,
  options: { concurrency?: number; compress?: Compressor } = {},
): Promise<CompressTreeResult> {
  const started = performance.now();
  const files = (await listFiles(dir)).filter((file) => isCompressible(file) && !isCompressedTwin(file));
  const result: CompressTreeResult = { files: 0, bytes: 0, brotliBytes: 0, gzipBytes: 0, ms: 0 };
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const file = files[next++]!;
      const body = await fs.readFile(file);
      const twins = await writeTwins(file, body, options.compress);
      result.files++;
      result.bytes += body.byteLength;
      result.brotliBytes += twins.br?.byteLength ?? body.byteLength;
      result.gzipBytes += twins.gzip?.byteLength ?? body.byteLength;
    }
  };
  // zlib runs on libuv's thread pool (4 threads): a few files at a time keep it busy.
  await Promise.all(Array.from({ length: options.concurrency ?? 4 }, worker));
  result.ms = performance.now() - started;
  return result;
}
