/** CPU priority of background threads: work readers do not wait for yields the cores to the work they do. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Raises the calling thread's nice value to `nice` (0-19; higher yields more), never lowering it.
 * Linux keeps a nice value per thread (setpriority on a thread id), so this leaves the process's
 * other threads alone; raising it needs no privilege. Answers whether it was applied (only on Linux).
 */
export function lowerThreadPriority(nice: number): boolean {
  if (process.platform !== 'linux') return false;
  try {
    // /proc/thread-self links to <pid>/task/<tid>.
    const tid = Number(path.basename(fs.readlinkSync('/proc/thread-self')));
    if (os.getPriority(tid) < nice) os.setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}
