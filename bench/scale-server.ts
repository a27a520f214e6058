/**
 * Bench only: starts scripts/serve.ts with an event-loop delay histogram running inside the server
 * process. On SIGUSR2 it writes the histogram since the last signal to BENCH_ELD_FILE (a 0600 file)
 * and starts a new one, so the bench reads the server's own event-loop blocking during a burst.
 * Nothing of this is reachable over HTTP; the production server never loads it.
 */
import fs from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const file = process.env.BENCH_ELD_FILE;
if (!file) throw new Error('BENCH_ELD_FILE is required');
// 1 ms sampling: a 20 ms block cannot hide between two samples.
const histogram = monitorEventLoopDelay({ resolution: 1 });
histogram.enable();
// With BENCH_CPU_PROF: when each long delay ended (monotonic µs, the CPU profile's clock), to find it in the profile.
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
process.on('SIGUSR2', () => {
  const ms = (ns: number) => Number((ns / 1e6).toFixed(2));
  const report = {
    maxMs: ms(histogram.max),
    p99Ms: ms(histogram.percentile(99)),
    p50Ms: ms(histogram.percentile(50)),
    meanMs: ms(histogram.mean),
    samples: histogram.count,
    rssMB: Math.round(process.memoryUsage().rss / 1048576),
    ...(process.env.BENCH_CPU_PROF ? { longDelays: longDelays.splice(0) } : {}),
  };
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(report), { mode: 0o600 });
  fs.renameSync(`${file}.tmp`, file);
  histogram.reset();
});
await import('../scripts/serve.ts');
