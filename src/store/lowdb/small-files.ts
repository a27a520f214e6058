/** Small JSON files, one per record, sharded by a hash of their key so no folder or document grows with the archive. */
import fs from 'node:fs';
import path from 'node:path';
import { createHash, randomUUID } from 'node:crypto';
import { gated } from './write-gate.ts';

/** Two hex characters of the key's SHA-256: 256 folders, whatever the ids look like. */
export function shardOf(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 2);
}

/** A key as a file name: ids are [A-Za-z0-9_-], anything else is encoded. */
export function fileKey(key: string): string {
  return /^[A-Za-z0-9_-]{1,128}$/.test(key) ? key : encodeURIComponent(key).replace(/\./g, '%2E');
}

/**
 * Writes JSON atomically: a temp file beside the target, then renamed over it (like the collection
 * files, without an fsync per write: a crash leaves the old file or the new one, never half of one).
 */
export function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  return gated(file, () => writeJsonAtomicNow(file, value));
}

async function writeJsonAtomicNow(file: string, value: unknown): Promise<void> {
  await fs.promises.mkdir(path.dirname(file), { recursive: true });
  const temp = `${file}.${randomUUID()}.tmp`;
  try {
    await fs.promises.writeFile(temp, JSON.stringify(value));
    await fs.promises.rename(temp, file);
  } catch (error) {
    // A full disk: the partial temp file goes, the file keeps its previous content.
    await fs.promises.rm(temp, { force: true });
    throw error;
  }
}

/** Reads a JSON file, or undefined when it does not exist. */
export async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await fs.promises.readFile(file, 'utf8')) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Names in a folder, or none when it does not exist. */
export async function listNames(dir: string): Promise<string[]> {
  try {
    return await fs.promises.readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
