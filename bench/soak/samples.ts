/**
 * The soak run's watch on its servers: resident memory and open file descriptors of each server process
 * every few seconds, `/api/ready` every second (its changes kept), and a flatness verdict per process
 * from a straight-line fit over the last half of its life.
 */
import { readProcess, type SoakServer } from './servers.ts';

export type ProcessSeries = { server: string; pid: number; samples: [t: number, rssMB: number, fds: number][] };
export type ReadyChange = { t: number; server: string; ready: boolean | null; reason?: string };

export type Watch = {
  series: ProcessSeries[];
  readiness: ReadyChange[];
  stop: () => Promise<void>;
};

/** Starts sampling `servers` every `everyS` seconds (memory, fds) and every second (readiness). */
export function startWatch(servers: readonly SoakServer[], everyS: number, seconds: (t: number) => number): Watch {
  const series: ProcessSeries[] = [];
  const readiness: ReadyChange[] = [];
  const last = new Map<string, string>();
  const sample = () => {
    for (const server of servers) {
      const pid = server.pid();
      if (pid === undefined) continue;
      const figures = readProcess(pid);
      if (!figures) continue;
      let current = series.findLast((s) => s.pid === pid);
      if (!current) series.push((current = { server: server.name, pid, samples: [] }));
      current.samples.push([seconds(performance.now()), figures.rssMB, figures.fds]);
    }
  };
  let polling = Promise.resolve();
  const poll = () => {
    polling = Promise.all(
      servers.map(async (server) => {
        let change: Omit<ReadyChange, 't' | 'server'>;
        try {
          const response = await fetch(`${server.url}/api/ready`, { signal: AbortSignal.timeout(3000) });
          const body = (await response.json()) as { ready: boolean; reason?: string };
          change = { ready: body.ready, ...(body.reason ? { reason: body.reason } : {}) };
        } catch (error) {
          change = { ready: null, reason: `no answer: ${(error as Error).name === 'TimeoutError' ? 'none within 3 s' : 'refused'}` };
        }
        const key = JSON.stringify(change);
        if (last.get(server.name) === key) return;
        last.set(server.name, key);
        readiness.push({ t: seconds(performance.now()), server: server.name, ...change });
      }),
    ).then(() => {});
  };
  sample();
  const sampler = setInterval(sample, everyS * 1000);
  const poller = setInterval(poll, 1000);
  return {
    series,
    readiness,
    stop: async () => {
      clearInterval(sampler);
      clearInterval(poller);
      await polling;
      sample();
    },
  };
}

export type Trend = { start: number; end: number; min: number; peak: number; slopePerMin: number; growthLastHalf: number; verdict: string };

/** Least-squares slope of `ys` over `xs` (units per x unit). */
function fitSlope(xs: number[], ys: number[]): number {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/**
 * Start, end, min and peak of one figure, its slope over the last half of the samples, and a verdict:
 * `flat` when the fitted growth over that half stays within `allowance` (the same unit), else `growing`;
 * `too short` below a minute of samples.
 */
export function trendOf(samples: ProcessSeries['samples'], column: 1 | 2, allowance: (mean: number) => number): Trend {
  const values = samples.map((s) => s[column]);
  const half = samples.slice(Math.floor(samples.length / 2));
  const xs = half.map((s) => s[0] / 60);
  const ys = half.map((s) => s[column]);
  const slopePerMin = half.length >= 3 ? fitSlope(xs, ys) : 0;
  const spanMin = half.length ? half.at(-1)![0] / 60 - half[0]![0] / 60 : 0;
  const growth = slopePerMin * spanMin;
  const mean = ys.reduce((a, b) => a + b, 0) / Math.max(1, ys.length);
  const lifeS = samples.length ? samples.at(-1)![0] - samples[0]![0] : 0;
  return {
    start: values[0] ?? NaN,
    end: values.at(-1) ?? NaN,
    min: Math.min(...values),
    peak: Math.max(...values),
    slopePerMin: Math.round(slopePerMin * 100) / 100,
    growthLastHalf: Math.round(growth * 10) / 10,
    verdict: lifeS < 60 ? 'too short' : growth <= allowance(mean) ? 'flat' : 'growing',
  };
}

/** Memory may drift by the larger of 16 MB and 10% over the last half (V8 sizes its heap as it goes); fds by 8. */
export const RSS_ALLOWANCE = (mean: number) => Math.max(16, mean * 0.1);
export const FD_ALLOWANCE = () => 8;
