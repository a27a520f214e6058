/**
 * The CPU time of this process's threads, summed by name (Linux /proc/self/task): MainThread,
 * WorkerThread (worker_threads), V8Worker (V8's collector and compiler), libuv-worker (the file
 * system and zlib pool). Empty elsewhere. For the rebuild's CPU budget and the lab's readings.
 */
import fs from 'node:fs';

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
