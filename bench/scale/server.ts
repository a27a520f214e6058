/** The server bench:scale measures: started through bench/scale-server.ts, pinned to cores, its memory, queue and event loop read. */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_NODE_FLAGS, waitForListening } from '../../scripts/server-process.ts';
import { children, NODE, runNode } from '../children.ts';
import { childProcesses } from '../process-tree.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const ADMIN = { username: 'bench-admin', password: 'bench-password-not-secret' };
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `npm run rebuild` (with args), with heap enough for a 100,000-article build. */
export function rebuild(dataDir: string, outDir: string, args: string[], env: Record<string, string> = {}) {
  return runNode(
    path.join(ROOT, 'scripts/rebuild.ts'),
    args,
    { OUT_DIR: outDir, DATA_DIR: dataDir, SEED: 'none', NODE_OPTIONS: '--max-old-space-size=16384', ...env },
    3 * 3600_000,
  );
}

/** What `npm run rebuild -- --all` printed in its summary (scripts/rebuild-all.ts); undefined without its "pages rendered" line. */
export type RerenderSummary = {
  /** "N on T thread(s) in S s, P pages/s", as printed. */
  rendered: string;
  pages: number;
  threads: number;
  renderS: number;
  pagesPerS: number;
  written: number;
  unchanged: number;
  /** The "files prerendered" and "search index" lines' text. */
  build: string;
  search: string;
  /** The "newest first" line: when the front pages and the last day's and week's pages had all been drawn, as printed and read. */
  newestText: string;
  newest: Array<{ label: string; pages: number; seconds: number }>;
  /** The "CPU a page" line: ms of CPU a page in all and by part (undefined: a rebuild from before it was printed). */
  cpuPerPage?: CpuPerPage;
};

/** A page's share of the CPU of `--all`'s render phase, in ms (scripts/rebuild-all.ts), and the bundle loads' seconds in all. */
export type CpuPerPage = {
  total: number;
  render: number;
  brotli: number;
  gzip: number;
  dataLoadAndWrites: number;
  searchText: number;
  gcAndCompiler: number;
  fileSystem: number;
  other: number;
  /** The render threads' loading of the bundle: a page's share, and the seconds in all. */
  bundleLoad: number;
  bundleLoadsS: number;
};

/** Reads the "CPU a page" line of an `--all` summary. */
function parseCpuPerPage(output: string): CpuPerPage | undefined {
  const line = /^ {2}CPU a page +(.*)$/m.exec(output)?.[1];
  if (!line) return undefined;
  const figure = (pattern: RegExp) => Number(pattern.exec(line)?.[1] ?? NaN);
  return {
    total: figure(/^([\d.]+) ms:/),
    render: figure(/render ([\d.]+)/),
    brotli: figure(/brotli ([\d.]+)/),
    gzip: figure(/gzip ([\d.]+)/),
    dataLoadAndWrites: figure(/data load and writes ([\d.]+)/),
    searchText: figure(/search text ([\d.]+)/),
    gcAndCompiler: figure(/GC and compiler ([\d.]+)/),
    fileSystem: figure(/file system ([\d.]+)/),
    other: figure(/other ([\d.]+)/),
    bundleLoad: figure(/loading the bundle ([\d.]+)/),
    bundleLoadsS: figure(/\(([\d.]+) s in all\)/),
  };
}

export function parseRerenderSummary(output: string): RerenderSummary | undefined {
  const line =
    /^ {2}pages rendered +((\d+) on (\d+) thread\(s\) in ([\d.]+) s, (\d+) pages\/s)(?: \((\d+) written, (\d+) unchanged\))?/m.exec(output);
  if (!line) return undefined;
  const newestText = /^ {2}newest first +(.*)$/m.exec(output)?.[1] ?? '';
  const cpu = parseCpuPerPage(output);
  return {
    rendered: line[1]!,
    pages: Number(line[2]),
    threads: Number(line[3]),
    renderS: Number(line[4]),
    pagesPerS: Number(line[5]),
    written: Number(line[6] ?? NaN),
    unchanged: Number(line[7] ?? NaN),
    build: /^ {2}files prerendered +(.*)$/m.exec(output)?.[1] ?? '',
    search: /^ {2}search index +(.*)$/m.exec(output)?.[1] ?? '',
    newestText,
    newest: [...newestText.matchAll(/([^,:]+): (\d+) pages in ([\d.]+) s/g)].map((mark) => ({
      label: mark[1]!.trim(),
      pages: Number(mark[2]),
      seconds: Number(mark[3]),
    })),
    ...(cpu ? { cpuPerPage: cpu } : {}),
  };
}

/** The server's event loop over a stretch (bench/scale-server.ts). */
export type LoopDelay = {
  maxMs: number;
  p99Ms: number;
  rssMB: number;
  /** The server thread's own CPU time within its longest delay (the rest it waited for a core). */
  longestDelayCpuMs: number;
  /** The most CPU time the thread spent within any one delay. */
  mostCpuInOneDelayMs: number;
  /** Delays longer than 20 ms, and how many of them the thread spent mostly waiting for a core (less than half its own CPU). */
  delaysOver20: number;
  delaysOver20Waiting: number;
  /** The longest garbage-collection pause, and its kind (minor, major...). */
  gcMaxMs: number;
  gcMaxKind: string;
  /** CPU time used by each kind of thread of the server (MainThread, V8Worker, libuv-worker, WorkerThread). */
  threadCpuMs: Record<string, number>;
  /** The event loop's thread: time it ran, and time it was ready but waited in the run queue for a core (Linux schedstat). */
  mainRunMs: number;
  mainRunQueueMs: number;
};

export const cpuByThread = (loop: LoopDelay) =>
  Object.entries(loop.threadCpuMs)
    .map(([name, ms]) => `${name} ${ms} ms`)
    .join(', ');

export type ScaleServer = {
  url: string;
  pid: number;
  startMs: number;
  output: () => string;
  /** The server's event-loop delay histogram since the last call (read inside the server, on SIGUSR2). */
  loopDelay: () => Promise<LoopDelay>;
  stop: () => Promise<void>;
};

/**
 * While the server is measured the load generators (this process, the reader load, Chromium) are
 * held to the first core and the server may use every core, as with load generators on another
 * machine. During the write bursts the cores are split the way a front on a core of its own would
 * run: the first core is the network side (nginx, which deploy/nginx.conf runs at a higher priority,
 * and the reader load, standing in for the readers' network), the others are the server's, shared
 * with the writers' load at a lower priority (the editors and voters). On one shared core a reader
 * waits behind whatever the server is doing at that instant, however briefly: this VM's kernel does
 * not preempt a thread inside a system call (PREEMPT_NONE), and its scheduler hands out 4 ms slices.
 * BENCH_NO_PIN=1 shares the cores as they come.
 */
export const PIN = os.cpus().length >= 2 && fs.existsSync('/usr/bin/taskset') && !process.env.BENCH_NO_PIN;
export const ALL_CPUS = `0-${os.cpus().length - 1}`;
export const NETWORK_CPUS = '0';
/** Publishes per size whose publish -> findable time is taken (the median is the figure). */
export const FINDABLE_RUNS = 3;
export const SERVER_BURST_CPUS = os.cpus().length > 2 ? `1-${os.cpus().length - 1}` : '1';

/** Process `pid` and every process under it (the server's Pagefind indexer), children after their parent. */
function processTree(pid: number): number[] {
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) tree.push(...childProcesses(tree[i]!));
  return tree;
}

/**
 * Pins every thread of process `pid`, and of the processes it started (Pagefind's indexer, which
 * would otherwise keep the affinity it started with and index on the readers' core), to `cpus`.
 */
export function pin(pid: number, cpus: string): void {
  if (!PIN) return;
  for (const each of processTree(pid)) {
    try {
      execFileSync('/usr/bin/taskset', ['-a', '-p', '-c', cpus, String(each)], { stdio: 'ignore' });
    } catch (error) {
      // A child that ended between the listing and taskset; the server itself must be pinned.
      if (each === pid) throw error;
    }
  }
}

/** Pins every thread of this process (and so the children it starts next) to `cpus`. */
export function pinBench(cpus: string): void {
  pin(process.pid, cpus);
}

/** What an investigation (bench/lab/scale-bursts.ts) adds to the server: Node or V8 flags, environment, copies of readings and output. */
export type ServerProbes = {
  nodeArgs?: string[];
  env?: Record<string, string>;
  /** Called with each event-loop reading's file before it is read. */
  onReading?: (file: string, pid: number) => void;
  /** Called with the server's output when it has stopped. */
  onStopped?: (output: string, pid: number) => void;
};

/** Starts scripts/serve.ts in production mode through bench/scale-server.ts, on every core, and waits until it listens. */
export async function startScaleServer(dataDir: string, outDir: string, workDir: string, probes: ServerProbes = {}): Promise<ScaleServer> {
  const eldFile = path.join(workDir, 'event-loop-delay.json');
  const t0 = performance.now();
  const args = ['--max-old-space-size=8192', ...SERVER_NODE_FLAGS, ...(probes.nodeArgs ?? []), path.join(ROOT, 'bench/scale-server.ts')];
  // taskset execs node in place, so the child's pid is the server's.
  const child = spawn(PIN ? '/usr/bin/taskset' : NODE, PIN ? ['-c', ALL_CPUS, NODE, ...args] : args, {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: '0',
      DATA_DIR: dataDir,
      OUT_DIR: outDir,
      SERVE_DIR: path.join(outDir, 'client'),
      SEED: 'none',
      // Production mode (scripts/serve.ts run directly) refuses to start without it; the build's default.
      SITE_URL: 'http://localhost:4321',
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
      TRUST_PROXY: 'true',
      RATE_LIMIT_FACTOR: '10000',
      FETCH_ALLOW_PRIVATE_NETWORKS: 'true',
      FEED_FETCH_INTERVAL_MINUTES: '100000',
      BENCH_ELD_FILE: eldFile,
      ...probes.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  // The log is kept bounded: only what the bench reads (publish lines) matters.
  const { url, output, exited } = await waitForListening(child, 600_000, 50_000_000);
  const startMs = performance.now() - t0;
  return {
    url,
    pid: child.pid!,
    startMs,
    output,
    loopDelay: async () => {
      fs.rmSync(eldFile, { force: true });
      child.kill('SIGUSR2');
      for (let i = 0; i < 500 && !fs.existsSync(eldFile); i++) await sleep(10);
      probes.onReading?.(eldFile, child.pid!);
      return JSON.parse(fs.readFileSync(eldFile, 'utf8')) as LoopDelay;
    },
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      children.delete(child);
      probes.onStopped?.(output(), child.pid!);
    },
  };
}

/** Peak and current resident memory of a process, from /proc (MB). */
export function memoryOf(pid: number): { peakMB: number; rssMB: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
  return { peakMB: Math.round(kb('VmHWM') / 1024), rssMB: Math.round(kb('VmRSS') / 1024) };
}

export async function waitUntil(timeoutMs: number, check: () => Promise<boolean>, everyMs = 10): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (await check()) return true;
    await sleep(everyMs);
  }
  return false;
}

/**
 * Waits until no job is queued and no reconcile runs (a start on pages older than the store re-checks
 * every page: 15 minutes at 100,000 articles, and nothing measured meanwhile would mean anything).
 */
export async function waitForIdleQueue(url: string, timeoutMs = 1_800_000): Promise<void> {
  let left: { jobs: number; reconciling?: number } = { jobs: -1 };
  const ok = await waitUntil(
    timeoutMs,
    async () => {
      left = (await (await fetch(`${url}/api/health`)).json()) as typeof left;
      // A site built before /api/health reported reconciles (a kept --bursts-only folder) has no field.
      return left.jobs === 0 && (left.reconciling ?? 0) === 0;
    },
    50,
  );
  if (!ok)
    throw new Error(`the regeneration queue did not drain: ${left.jobs} jobs and ${left.reconciling ?? '?'} pages to reconcile left`);
}

/** Pages the regeneration worker wrote (or deleted) in a stretch of its log. */
export function pagesWritten(log: string): number {
  return [...log.matchAll(/\[publish\] \S+ (written|deleted) in /g)].length;
}

/** Of pagesWritten, the files of tag and author archives (issue 35). */
export function archivePagesWritten(log: string): number {
  return [...log.matchAll(/\[publish\] \/(?:tag|author)\/\S+ (written|deleted) in /g)].length;
}
