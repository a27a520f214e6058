/**
 * Investigation probes of the server's event loop, loaded into bench/scale-server.ts by bench/lab/scale-bursts.ts
 * (BENCH_LOOP_PROBES names this file); each reading adds what they saw since the last one. The regression bench
 * never loads them: the sched probe costs one more file read a sample.
 *
 * - BENCH_CPU_PROF=1: when each delay over 10 ms ended (monotonic µs, the CPU profile's clock), to find it in the profile.
 * - BENCH_SCHED_PROBE=1: every delay over 15 ms with the time the thread ran and waited in the run queue inside it
 *   (Linux schedstat); a delay that is all run-queue time was spent waiting behind other threads for the core.
 */
import fs from 'node:fs';

const msOf = (ns: number) => Number((ns / 1e6).toFixed(2));

/** This thread's nanoseconds run, nanoseconds waiting for a core, and slices given (Linux). */
function readSchedStat(): [number, number, number] {
  try {
    const [run, queued, slices] = fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
    return [run ?? 0, queued ?? 0, slices ?? 0];
  } catch {
    return [0, 0, 0];
  }
}

const longDelays: { endUs: number; ms: number }[] = [];
if (process.env.BENCH_CPU_PROF) {
  let last = process.hrtime.bigint();
  setInterval(() => {
    const now = process.hrtime.bigint();
    const ms = Number(now - last) / 1e6 - 2;
    if (ms > 10) longDelays.push({ endUs: Number(now / 1000n), ms: Number(ms.toFixed(1)) });
    last = now;
  }, 2).unref();
}

const schedDelays: { ms: number; runMs: number; runQueueMs: number; slices: number }[] = [];
if (process.env.BENCH_SCHED_PROBE) {
  let lastWall = performance.now();
  let lastSched = readSchedStat();
  setInterval(() => {
    const wall = performance.now();
    const now = readSchedStat();
    const ms = wall - lastWall - 1;
    if (ms > 15)
      schedDelays.push({
        ms: Number(ms.toFixed(2)),
        runMs: msOf(now[0] - lastSched[0]),
        runQueueMs: msOf(now[1] - lastSched[1]),
        slices: now[2] - lastSched[2],
      });
    lastWall = wall;
    lastSched = now;
  }, 1).unref();
}

/** What the probes saw since the last reading, added to the reading's JSON. */
export function readProbes(): Record<string, unknown> {
  return {
    ...(process.env.BENCH_CPU_PROF ? { longDelays: longDelays.splice(0) } : {}),
    ...(process.env.BENCH_SCHED_PROBE ? { schedDelays: schedDelays.splice(0) } : {}),
  };
}
