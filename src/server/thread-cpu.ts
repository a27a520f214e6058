/**
 * CPU time for the rebuild's CPU budget and the lab's readings: the calling thread's, the whole
 * process's, and each kind of thread's (Linux /proc/self/task): MainThread, WorkerThread
 * (worker_threads), V8Worker (V8's collector and compiler), libuv-worker (the file system and zlib pool).
 */
import fs from 'node:fs';

/** The CPU time (µs) of the calling thread so far. */
export function threadCpuMicros(): number {
  const { user, system } = process.threadCpuUsage();
  return user + system;
}

/** The CPU time (µs) of every thread of the process so far. */
export function processCpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** CPU milliseconds each kind of thread used so far (10 ms ticks); threads that ended are not counted. */
export function cpuByThreadName(): Record<string, number> {
  const out: Record<string, number> = {};
  let tids: string[];
  try {
    tids = fs.readdirSync('/proc/self/task');
  } catch {
    return out;
  }
  for (const tid of tids) {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    // utime and stime (fields 14 and 15) in clock ticks of 10 ms.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out[name] = (out[name] ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10;
  }
  return out;
}
