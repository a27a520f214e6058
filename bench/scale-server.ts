/**
 * Bench only: starts scripts/serve.ts with an event-loop delay histogram running inside the server
 * process. On SIGUSR2 it writes the histogram since the last signal to BENCH_ELD_FILE (a 0600 file)
 * and starts a new one, so the bench reads the server's own event-loop blocking during a burst.
 * Nothing of this is reachable over HTTP; the production server never loads it.
 */
import fs from 'node:fs';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { cpuByThreadName } from '../src/server/thread-cpu.ts';

const file = process.env.BENCH_ELD_FILE;
if (!file) throw new Error('BENCH_ELD_FILE is required');
// 1 ms sampling: a 20 ms block cannot hide between two samples.
const histogram = monitorEventLoopDelay({ resolution: 1 });
histogram.enable();
// An investigation's probes (bench/lab/loop-probes.ts), when bench/lab/scale-bursts.ts names them.
const probes = process.env.BENCH_LOOP_PROBES
  ? ((await import(process.env.BENCH_LOOP_PROBES)) as { readProbes: () => Record<string, unknown> })
  : undefined;
// What the delays were made of: the CPU time this thread spent within each (its own work, garbage
// collection included), the rest being time it waited for a core; the longest collection pause and its
// kind; and the CPU time each kind of thread of the process used (what shared the cores with it).
let longest = { ms: 0, cpuMs: 0 };
let mostCpuMs = 0;
// How many delays passed 20 ms (the target), and how many of those the thread spent mostly waiting for a core.
let over20 = 0;
let over20Waiting = 0;
let gc = { ms: 0, kind: '' };
let lastWall = performance.now();
let lastCpu = process.threadCpuUsage();
/** Nanoseconds as milliseconds with two decimals, as the report gives them. */
const msOf = (ns: number) => Number((ns / 1e6).toFixed(2));
/**
 * This thread's scheduler statistics (Linux): nanoseconds run, nanoseconds spent runnable in the run
 * queue waiting for a core, and how many times it was given one.
 */
function schedStat(): [number, number, number] {
  try {
    const [run, queued, slices] = fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
    return [run ?? 0, queued ?? 0, slices ?? 0];
  } catch {
    return [0, 0, 0];
  }
}
let burstSched = schedStat();
setInterval(() => {
  const wall = performance.now();
  const cpu = process.threadCpuUsage();
  const ms = wall - lastWall - 1;
  const cpuMs = (cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000;
  if (ms > longest.ms) longest = { ms, cpuMs };
  if (ms > 20) {
    over20++;
    if (cpuMs < ms / 2) over20Waiting++;
  }
  mostCpuMs = Math.max(mostCpuMs, cpuMs);
  lastWall = wall;
  lastCpu = cpu;
}, 1).unref();
const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks',
};
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0;
    if (entry.duration > gc.ms) gc = { ms: entry.duration, kind: GC_KINDS[kind] ?? String(kind) };
  }
}).observe({ entryTypes: ['gc'] });

let threadsBefore = cpuByThreadName();

process.on('SIGUSR2', () => {
  // When each reading was taken, on the clock of V8's GC traces (the lab's BENCH_SERVER_FLAGS=--trace-gc-nvp), to find a burst in them.
  console.log(`[bench] event-loop reading at ${Math.round(performance.now())} ms`);
  const threadsNow = cpuByThreadName();
  const threadCpuMs = Object.fromEntries(
    Object.entries(threadsNow)
      .map(([name, used]) => [name, used - (threadsBefore[name] ?? 0)] as const)
      .filter(([, used]) => used > 0),
  );
  threadsBefore = threadsNow;
  const sched = schedStat();
  const report = {
    maxMs: msOf(histogram.max),
    p99Ms: msOf(histogram.percentile(99)),
    p50Ms: msOf(histogram.percentile(50)),
    meanMs: msOf(histogram.mean),
    samples: histogram.count,
    rssMB: Math.round(process.memoryUsage().rss / 1048576),
    longestDelayCpuMs: Number(longest.cpuMs.toFixed(2)),
    mostCpuInOneDelayMs: Number(mostCpuMs.toFixed(2)),
    delaysOver20: over20,
    delaysOver20Waiting: over20Waiting,
    gcMaxMs: Number(gc.ms.toFixed(2)),
    gcMaxKind: gc.kind,
    threadCpuMs,
    // The event loop's thread in all: time it ran, and time it was ready to run but waited for a core.
    mainRunMs: msOf(sched[0] - burstSched[0]),
    mainRunQueueMs: msOf(sched[1] - burstSched[1]),
    ...probes?.readProbes(),
  };
  burstSched = sched;
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(report), { mode: 0o600 });
  fs.renameSync(`${file}.tmp`, file);
  histogram.reset();
  longest = { ms: 0, cpuMs: 0 };
  mostCpuMs = 0;
  over20 = 0;
  over20Waiting = 0;
  gc = { ms: 0, kind: '' };
});
const { serveSite } = await import('../scripts/serve.ts');
await serveSite({ production: true });
