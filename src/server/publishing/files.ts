/** Writing and removing served files so a reader never gets half a file: temp file beside the target, then rename. */
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import {
  ENCODINGS,
  isCompressible,
  MIN_COMPRESS_BYTES,
  removeTwins,
  stageFile,
  stageTwins,
  writeTwins,
  type Compressor,
  type StagedTwins,
  type Twins,
} from './compress.ts';

export type FileOutcome = 'written' | 'unchanged' | 'deleted' | 'absent';

/**
 * What the render thread already found out about a page's file in the message that drew it: that the
 * file holds exactly these bytes, or the twins to write with the new ones (docs/performance.md,
 * 2026-12-03, on the compare and compression in the render's message).
 */
export type PreparedWrite = { unchanged: true } | { unchanged: false; twins: Twins };

type ChangeListener = (fileOrFolder: string) => void;
const listeners = new Set<ChangeListener>();

/**
 * Calls `listener` with the absolute path of every served file (or folder, for a swapped search
 * index) this process replaces or removes; the static server drops what it holds in memory for it.
 */
export function onServedFileChange(listener: ChangeListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function notifyServedFileChange(fileOrFolder: string): void {
  for (const listener of listeners) listener(path.resolve(fileOrFolder));
}

/** Whether a file that should have twins has them (existence only: a stale twin is never served anyway). */
async function twinsPresent(target: string, body: Uint8Array): Promise<boolean> {
  if (!isCompressible(target) || body.byteLength < MIN_COMPRESS_BYTES) return true;
  for (const { suffix } of ENCODINGS) {
    if (
      !(await fs.access(target + suffix).then(
        () => true,
        () => false,
      ))
    )
      return false;
  }
  return true;
}

/**
 * Replaces `target` with `body` unless it already holds exactly that (unaffected files keep their
 * mtime and ETag). The compressed twins go first, each by temp + rename, then the file itself: the
 * static server serves a twin only when it decodes to the file, so a reader between the renames
 * gets the old or the new page, never a mix. Temp names start with a dot, which is never served.
 * `compress` makes the twins (default: in libuv's pool); `prepared`, when the render thread compared
 * the file and made the twins already, spares this thread the read and the compression.
 */
export async function writeFileAtomic(
  target: string,
  body: Uint8Array,
  compress?: Compressor,
  prepared?: PreparedWrite,
): Promise<FileOutcome> {
  if (prepared?.unchanged || (!prepared && (await holds(target, body)))) {
    // Twins can be missing on a folder built before compression existed: make them, keep the file.
    if (!(await twinsPresent(target, body))) {
      await writeTwins(target, body, compress);
      notifyServedFileChange(target);
    }
    return 'unchanged';
  }
  const made = prepared && !prepared.unchanged ? prepared.twins : undefined;
  const twinsOf: Compressor | undefined = made ? () => Promise.resolve(made) : compress;
  await fs.mkdir(path.dirname(target), { recursive: true });
  // Every byte is written under temp names before anything is renamed: a full disk stops the write
  // with the old page and its twins as they were, and no temp file left taking the space.
  const page = await stageFile(target, body);
  let twins: StagedTwins | undefined;
  try {
    twins = await stageTwins(target, body, twinsOf);
    await twins.commit();
    await fs.rename(page.temp, target);
  } catch (error) {
    await twins?.abort();
    await fs.rm(page.temp, { force: true });
    throw error;
  }
  notifyServedFileChange(target);
  return 'written';
}

/** Whether `target` holds exactly `body` (false when it does not exist). */
async function holds(target: string, body: Uint8Array): Promise<boolean> {
  try {
    return Buffer.compare(await fs.readFile(target), body) === 0;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return false;
  }
}

/**
 * writeFileAtomic's `prepared`, made where the page was drawn (the render thread, which may block): whether
 * `target` holds `body` already, or the twins `compress` makes for it. Undefined when the file cannot be read
 * for another reason than its absence: writeFileAtomic then meets the error itself, with its code.
 */
export function prepareWrite(
  target: string,
  body: Uint8Array,
  compress: (file: string, body: Uint8Array) => Twins,
): PreparedWrite | undefined {
  let current: Buffer | undefined;
  try {
    current = readFileSync(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return undefined;
  }
  if (current && Buffer.compare(current, body) === 0) return { unchanged: true };
  return { unchanged: false, twins: compress(target, body) };
}

/** Removes a served file (and its twins), and its folder when that leaves it empty (article/slug/). */
export async function deleteServedFile(target: string, clientDir: string): Promise<FileOutcome> {
  try {
    await fs.unlink(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      await removeTwins(target);
      return 'absent';
    }
    throw error;
  }
  notifyServedFileChange(target);
  await removeTwins(target);
  const root = path.resolve(clientDir);
  for (let dir = path.dirname(target); dir.startsWith(root + path.sep); dir = path.dirname(dir)) {
    try {
      await fs.rmdir(dir);
    } catch {
      break; // Not empty (or already gone): stop climbing.
    }
  }
  return 'deleted';
}
