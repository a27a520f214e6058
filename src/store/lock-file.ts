/** A lock file that keeps a second process off the same DATA_DIR (and, through acquireLockFile, off a served folder). */
import fs from 'node:fs';
import path from 'node:path';
import { StoreLockedError } from './types.ts';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the lock or throws StoreLockedError; a lock left by a dead process is taken over. */
export function acquireLock(dataDir: string): () => void {
  return acquireLockFile(path.join(dataDir, '.lock'), (pid) => new StoreLockedError(dataDir, pid));
}

/**
 * Creates `lockPath` holding this pid, or throws what `held` makes of the live holder's pid; a lock
 * left by a dead process is taken over. Answers the release function (also run at exit).
 */
export function acquireLockFile(lockPath: string, held: (pid: number | undefined) => Error): () => void {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = fs.openSync(lockPath, 'wx');
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        // Unhook from exit so opening and closing stores many times does not pile up listeners.
        process.off('exit', release);
        try {
          if (fs.readFileSync(lockPath, 'utf8').trim() === String(process.pid)) fs.unlinkSync(lockPath);
        } catch {
          // Already gone.
        }
      };
      process.once('exit', release);
      return release;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number.parseInt(fs.readFileSync(lockPath, 'utf8').trim(), 10);
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw held(pid);
      }
      // Stale lock from a process that died (e.g. SIGKILL): remove it and try again.
      fs.rmSync(lockPath, { force: true });
    }
  }
  throw held(undefined);
}

/** The pid holding the lock, if a live process holds it. */
export function lockHolder(dataDir: string): number | undefined {
  try {
    const pid = Number.parseInt(fs.readFileSync(path.join(dataDir, '.lock'), 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}
