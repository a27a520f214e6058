/** The served-folder lock: one server serves and regenerates a folder, a second one is refused. */
import fs from 'node:fs';
import path from 'node:path';
import { acquireLockFile } from '../../store/lock-file.ts';

export class ServedFolderLockedError extends Error {
  readonly folder: string;
  readonly pid: number | undefined;
  constructor(folder: string, pid: number | undefined) {
    super(
      `${folder} is served by another server${pid ? ` (pid ${pid})` : ''}: two servers would regenerate the same pages, each to its own data. ` +
        'Stop that server, or give this one a folder of its own with SERVE_DIR=/some/folder (or a build of its own with OUT_DIR=...).',
    );
    this.name = 'ServedFolderLockedError';
    this.folder = folder;
    this.pid = pid;
  }
}

/**
 * The lock file of a served folder. It sits beside the folder, not in it, because a rebuild swaps
 * the whole folder for a new one while the server keeps serving it.
 */
export function lockFileFor(clientDir: string): string {
  const dir = path.resolve(clientDir);
  return path.join(path.dirname(dir), `.${path.basename(dir)}.serve-lock`);
}

const held = new Map<string, () => void>();

/** Takes the served folder for this process (again a no-op: `npm start` locks before it builds, then serves). */
export function lockServedFolder(clientDir: string): () => void {
  const dir = path.resolve(clientDir);
  const existing = held.get(dir);
  if (existing) return existing;
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const release = acquireLockFile(lockFileFor(dir), (pid) => new ServedFolderLockedError(dir, pid));
  const releaseOnce = () => {
    held.delete(dir);
    release();
  };
  held.set(dir, releaseOnce);
  return releaseOnce;
}
