/**
 * CPU priority of background threads: work readers do not wait for yields the cores to the work they do.
 *
 * Linux keeps a nice value per thread (setpriority on a thread id), and raising it needs no
 * privilege. Everything here only ever raises a value (a thread started at 15 stays at 15), and does
 * nothing on other systems.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The nice value of the server's background work: the render thread and Pagefind's indexing process.
 * At 10 a thread weighs a tenth of one at 0 with the scheduler, so the thread that answers requests
 * is taken up first when it wakes on a busy core.
 *
 * V8's helper threads stay at the server's value on purpose. At 10 (bench:scale, with the young
 * generation of SERVER_NODE_FLAGS) the event loop waited less behind their concurrent marking at
 * 1,000 and 10,000 articles, but at 100,000 their marking fell behind and one major collection during
 * a burst paused the event loop several times longer, mostly the main thread's own work
 * (docs/performance.md, 2026-11-26 entry on V8's helper threads).
 */
export const BACKGROUND_NICE = 10;

/** Raises thread `tid`'s nice value to `nice`; false if the thread is gone or refused. */
function raiseNice(tid: number, nice: number): boolean {
  try {
    if (os.getPriority(tid) < nice) os.setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}

/** Raises the calling thread's nice value to `nice` (0-19), leaving the process's other threads alone. Answers whether it was applied. */
export function lowerThreadPriority(nice: number): boolean {
  if (process.platform !== 'linux') return false;
  try {
    // /proc/thread-self links to <pid>/task/<tid>.
    return raiseNice(Number(path.basename(fs.readlinkSync('/proc/thread-self'))), nice);
  } catch {
    return false;
  }
}

/** Raises the nice value of every thread of process `pid` to `nice` (the threads it starts later inherit it). True if applied. */
export function lowerProcessPriority(pid: number, nice: number): boolean {
  if (process.platform !== 'linux') return false;
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return false; // it ended
  }
  for (const tid of tids) raiseNice(Number(tid), nice);
  return true;
}
