/**
 * The render state: one file beside the served folder (OUT_DIR/render-state.json) saying what the
 * served files were rendered from. Its first line is the small part both writers rewrite: the manifest
 * (store, article version, SITE_URL; the worker's when its queue runs empty, the rebuild's), the
 * rebuild's build fingerprint and the slugs today's search bundles were indexed with. One line per page
 * follows (the input and stat a rebuild recorded), so reading the manifest never parses the pages.
 * The first line is padded to a reserved size and ends with a checksum, so a change to it is one write
 * in place, whatever the number of pages (copying them cost 14 MB a publish at 110,000 pages), and a
 * read that meets a write half done (or a crash's torn line) knows it.
 *
 * Two files stay apart: render-journal.ndjson, because the worker appends a line per page it writes
 * while a rebuild may be taking the file over (render-journal.ts), and pagefind/periods.json, because
 * browsers read it (it is part of the served search index).
 */
import { hash } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

export const RENDER_STATE_FILE = 'render-state.json';

export const renderManifestSchema = z.object({
  storeId: z.string(),
  version: z.number().int(),
  renderedAt: z.string(),
  /** SITE_URL the pages were rendered with (canonical links, feeds): another one makes them stale too. */
  siteUrl: z.string().optional(),
  /** What wrote it: the build or the server's regeneration worker. */
  by: z.enum(['build', 'server']),
  /**
   * Search jobs of this folder still to run (job paths such as `/pagefind/2026-10`): a server on
   * PostgreSQL holds its own in memory, and a stop with some left names them here so the next start
   * runs them instead of re-checking every page.
   */
  searchJobs: z.array(z.string()).optional(),
});
export type RenderManifest = z.infer<typeof renderManifestSchema>;

export const pageStateSchema = z.object({
  /** Fingerprint of the data the page was rendered from. */
  i: z.string(),
  /** mtime and size of the file as written: a file changed by anything else is rendered again. */
  m: z.number(),
  s: z.number(),
  /** The search month of an article page, so a removed article's month is re-indexed. */
  p: z.string().optional(),
  /**
   * Fingerprint of what search indexes of an article page (its own record): a page rendered again for
   * its related reading or linked tags (data-pagefind-ignore) leaves its month's search bundle as it is.
   */
  t: z.string().optional(),
});
export type PageState = z.infer<typeof pageStateSchema>;

const headerSchema = z.object({
  format: z.literal(1),
  manifest: renderManifestSchema.optional(),
  /**
   * The rebuild's record: the fingerprint of the code, templates and site settings (`build`), of what the
   * pages are drawn with (`render`, scripts/render-fingerprint.ts), the store it rendered, and the
   * Pagefind version the search index was built with (`indexer`: bundles of two versions are never mixed).
   */
  rebuild: z.object({ build: z.string(), storeId: z.string(), render: z.string().optional(), indexer: z.string().optional() }).optional(),
  /** The slugs each bundle of today's search tier was indexed with (search-periods.ts). */
  dayTier: z.record(z.string(), z.array(z.string())).optional(),
  /**
   * The render fingerprint of the build the served pages were drawn with, when the server drew them all
   * (a reconcile) or `npm start` built them; newer than `rebuild.render`, which a rebuild records instead.
   * A start whose build differs re-renders every page while it serves (issue 36).
   */
  drawnWith: z.string().optional(),
});
export type RenderStateHeader = z.infer<typeof headerSchema>;

/** The render fingerprint of the build the served pages were drawn with, when known. */
export function pagesDrawnWith(header: RenderStateHeader): string | undefined {
  return header.drawnWith ?? header.rebuild?.render;
}
const pageLineSchema = pageStateSchema.extend({ path: z.string() });

const EMPTY: RenderStateHeader = { format: 1 };

export function renderStateFileFor(clientDir: string): string {
  return path.join(path.dirname(path.resolve(clientDir)), RENDER_STATE_FILE);
}

/** The file's bytes, or undefined when there is none. */
function readBytes(file: string): Buffer | undefined {
  try {
    return fs.readFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The first line of the file (the header) without reading the pages after it. */
function readFirstLine(file: string): string | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const chunks: Buffer[] = [];
    const chunk = Buffer.alloc(64 * 1024);
    for (;;) {
      const read = fs.readSync(fd, chunk, 0, chunk.length, null);
      const end = chunk.subarray(0, read).indexOf(10);
      if (end >= 0 || read === 0) {
        chunks.push(Buffer.from(chunk.subarray(0, end >= 0 ? end : read)));
        return Buffer.concat(chunks).toString('utf8');
      }
      chunks.push(Buffer.from(chunk.subarray(0, read)));
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** The header line's size is a multiple of this (its newline included): twice what it needs, so it can grow in place. */
const HEADER_BLOCK = 4096;
/** The line ends with a space and the first 8 hex digits of the SHA-1 of its JSON. */
const SUM_LENGTH = 9;

function checksum(json: string): string {
  return hash('sha1', json).slice(0, 8);
}

/** The header's line without its newline, padded with spaces to `size` bytes (or to twice its need). */
function formatHeaderLine(header: RenderStateHeader, size?: number): Buffer {
  const json = JSON.stringify(header);
  const need = Buffer.byteLength(json) + SUM_LENGTH;
  const length = size ?? Math.ceil((need * 2 + 1) / HEADER_BLOCK) * HEADER_BLOCK - 1;
  const line = Buffer.alloc(length, ' ');
  line.write(json, 0);
  line.write(` ${checksum(json)}`, length - SUM_LENGTH);
  return line;
}

type HeaderRead = { header: RenderStateHeader; torn: boolean };

/** The header of a line: a padded line must carry its JSON's checksum; an unpadded one (the first files written) is plain JSON. */
function parseHeaderLine(line: string | undefined): HeaderRead {
  if (!line) return { header: { ...EMPTY }, torn: false };
  let json = line;
  const sum = / ([0-9a-f]{8})$/.exec(line);
  if (sum && line.startsWith('{')) {
    json = line.slice(0, -SUM_LENGTH).trimEnd();
    if (checksum(json) !== sum[1]) return { header: { ...EMPTY }, torn: true };
  }
  try {
    const parsed = headerSchema.safeParse(JSON.parse(json));
    return { header: parsed.success ? parsed.data : { ...EMPTY }, torn: false };
  } catch {
    return { header: { ...EMPTY }, torn: true };
  }
}

/** Blocks this thread for `ms` (only to read again a header met mid-write). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The header of the state file (an empty one when there is no file, or it does not parse: the pages are then re-checked). */
export function readRenderStateHeader(file: string): RenderStateHeader {
  return readHeader(file).header;
}

/**
 * The first line and its header. A line that fails its checksum is read again a few times: it is
 * usually another write in place half done; one still torn after that is a crash's, and reads as empty.
 */
function readHeader(file: string): HeaderRead & { line: string | undefined } {
  for (let attempt = 0; ; attempt++) {
    const line = readFirstLine(file);
    const read = parseHeaderLine(line);
    if (!read.torn || attempt === 5) return { ...read, line };
    pause(2);
  }
}

/** The reserved size of a header line that can take `header` in place, else 0 (none, torn, or too small). */
function roomFor(read: ReturnType<typeof readHeader>, header: RenderStateHeader): number {
  const { line, torn } = read;
  if (line === undefined || torn || !/ [0-9a-f]{8}$/.test(line)) return 0;
  const size = Buffer.byteLength(line);
  return Buffer.byteLength(JSON.stringify(header)) + SUM_LENGTH <= size ? size : 0;
}

/** Writes `text` to a temp file and renames it over `file`; on a failure (a full disk) the temp goes and `file` stays. */
function replaceFile(file: string, text: string | Buffer[]): void {
  const temp = `${file}.${process.pid}.tmp`;
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    if (typeof text === 'string') fs.writeFileSync(temp, text);
    else {
      const fd = fs.openSync(temp, 'w');
      try {
        for (const part of text) fs.writeSync(fd, part);
      } finally {
        fs.closeSync(fd);
      }
    }
    fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
}

/**
 * Changes the header: in place when the new one fits the line's reserved size (one write at offset 0;
 * the page lines are not read), else by writing the file again with a larger reservation.
 */
export function updateRenderStateHeader(file: string, change: (header: RenderStateHeader) => RenderStateHeader): void {
  const current = readHeader(file);
  const header = change(current.header);
  const size = roomFor(current, header);
  if (size > 0) {
    const fd = fs.openSync(file, 'r+');
    try {
      fs.writeSync(fd, formatHeaderLine(header, size), 0, size, 0);
    } finally {
      fs.closeSync(fd);
    }
    return;
  }
  const bytes = readBytes(file);
  const end = bytes ? bytes.indexOf(10) : -1;
  const pages = bytes && end >= 0 ? bytes.subarray(end + 1) : Buffer.alloc(0);
  replaceFile(file, [formatHeaderLine(header), Buffer.from('\n'), pages]);
}

/** Header changes of this process, one at a time per file: the worker's two lanes both change it. */
const pendingChanges = new Map<string, Promise<void>>();
let tempSeq = 0;

/**
 * As updateRenderStateHeader, for the server: the write (and, when the header outgrows its line, the copy
 * of the page lines, about 14 MB at 110,000 pages) runs on libuv's pool, and this process's changes to
 * one file run in turn.
 */
export function updateRenderStateHeaderAsync(file: string, change: (header: RenderStateHeader) => RenderStateHeader): Promise<void> {
  const run = async () => {
    const current = readHeader(file);
    const header = change(current.header);
    const size = roomFor(current, header);
    if (size > 0) {
      const handle = await fsp.open(file, 'r+');
      try {
        await handle.write(formatHeaderLine(header, size), 0, size, 0);
      } finally {
        await handle.close();
      }
      return;
    }
    const bytes = await fsp.readFile(file).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    const end = bytes ? bytes.indexOf(10) : -1;
    const temp = `${file}.${process.pid}.${++tempSeq}.tmp`;
    try {
      await fsp.mkdir(path.dirname(file), { recursive: true });
      const handle = await fsp.open(temp, 'w');
      try {
        await handle.write(formatHeaderLine(header));
        await handle.write('\n');
        if (bytes && end >= 0) await handle.write(bytes.subarray(end + 1));
      } finally {
        await handle.close();
      }
      await fsp.rename(temp, file);
    } catch (error) {
      await fsp.rm(temp, { force: true });
      throw error;
    }
  };
  const next = (pendingChanges.get(file) ?? Promise.resolve()).then(run, run);
  const settled = next.catch(() => {});
  pendingChanges.set(file, settled);
  void settled.then(() => {
    if (pendingChanges.get(file) === settled) pendingChanges.delete(file);
  });
  return next;
}

/** The page lines of the state file (empty when there is none); lines that do not parse are skipped (those pages are re-checked). */
export function readRenderStatePages(file: string): Record<string, PageState> {
  const pages: Record<string, PageState> = {};
  const text = readBytes(file)?.toString('utf8') ?? '';
  for (const line of text.split('\n').slice(1)) {
    if (line === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    const page = pageLineSchema.safeParse(parsed);
    if (page.success) {
      const { path: publicPath, ...state } = page.data;
      pages[publicPath] = state;
    }
  }
  return pages;
}

/** Replaces the whole file: the header `change` makes of the current one, then one line per page. */
export function writeRenderStateFile(
  file: string,
  change: (header: RenderStateHeader) => RenderStateHeader,
  pages: Readonly<Record<string, PageState>>,
): void {
  const lines = [formatHeaderLine(change(readRenderStateHeader(file))).toString('utf8')];
  for (const [publicPath, state] of Object.entries(pages)) lines.push(JSON.stringify({ path: publicPath, ...state }));
  replaceFile(file, `${lines.join('\n')}\n`);
}

/** Where the layout before render-state.json kept its parts (OUT_DIR/..., and the day tier in the served index). */
function legacyFiles(clientDir: string): { manifest: string; pages: string; dayTier: string } {
  const outDir = path.dirname(path.resolve(clientDir));
  return {
    manifest: path.join(outDir, 'render-manifest.json'),
    pages: path.join(outDir, 'render-pages.json'),
    dayTier: path.join(path.resolve(clientDir), 'pagefind', '.day-tier.json'),
  };
}

function readJson(file: string): unknown {
  const bytes = readBytes(file);
  if (!bytes) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Moves a folder in the layout before render-state.json (render-manifest.json, render-pages.json and
 * pagefind/.day-tier.json, as 1.0.0 writes them) into render-state.json, once, then removes the old
 * files; the render journal and periods.json stay where they are. So the first start after the
 * upgrade trusts the pages as the old manifest did, instead of re-checking every one. Answers
 * whether it migrated anything. A part that does not parse is left out (what it described is re-checked).
 */
export function migrateRenderState(clientDir: string): boolean {
  const file = renderStateFileFor(clientDir);
  const old = legacyFiles(clientDir);
  const present = Object.values(old).filter((f) => fs.existsSync(f));
  if (present.length === 0) return false;
  if (!fs.existsSync(file)) {
    const manifest = renderManifestSchema.safeParse(readJson(old.manifest));
    const rebuild = z
      .object({ build: z.string(), storeId: z.string(), pages: z.record(z.string(), pageStateSchema) })
      .safeParse(readJson(old.pages));
    const dayTier = z.record(z.string(), z.array(z.string())).safeParse(readJson(old.dayTier));
    writeRenderStateFile(
      file,
      () => ({
        format: 1,
        ...(manifest.success ? { manifest: manifest.data } : {}),
        ...(rebuild.success ? { rebuild: { build: rebuild.data.build, storeId: rebuild.data.storeId } } : {}),
        ...(dayTier.success ? { dayTier: dayTier.data } : {}),
      }),
      rebuild.success ? rebuild.data.pages : {},
    );
  }
  // Removed only once the new file holds what they said (a crash before leaves them for the next try).
  for (const f of present) fs.rmSync(f, { force: true });
  return true;
}
