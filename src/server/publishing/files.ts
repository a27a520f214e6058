/** Writing and removing served files so a reader never gets half a file: temp file beside the target, then rename. */
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

export type FileOutcome = 'written' | 'unchanged' | 'deleted' | 'absent';

/**
 * Replaces `target` with `body` unless it already holds exactly that (unaffected files keep their
 * mtime and ETag). The temp name starts with a dot, which the static server never serves.
 */
export async function writeFileAtomic(target: string, body: Uint8Array): Promise<FileOutcome> {
  try {
    const current = await fs.readFile(target);
    if (Buffer.compare(current, body) === 0) return 'unchanged';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const dir = path.dirname(target);
  await fs.mkdir(dir, { recursive: true });
  const temp = path.join(dir, `.${path.basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await fs.writeFile(temp, body);
    await fs.rename(temp, target);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
  return 'written';
}

/** Removes a served file, and its folder when that leaves it empty (article/slug/). */
export async function deleteServedFile(target: string, clientDir: string): Promise<FileOutcome> {
  try {
    await fs.unlink(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    throw error;
  }
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
