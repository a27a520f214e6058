/**
 * A template deploy at archive scale (issue 36), on a store and site that already exist:
 * `node bench/lab/rerender-all.ts DATA_DIR OUT_DIR [--cold]` runs `npm run rebuild -- --all` twice against them:
 *
 * 1. "template change": with SITE_NAME changed, a name every page shows in its header and footer, outside the
 *    part search indexes: every page is written again (and compressed, brotli and gzip), the search index is kept;
 * 2. "same build": every page drawn again to the bytes it has (none written), what bench:scale's `--all` measures.
 *
 * Each run also records how busy the cores were (Linux /proc/stat), to tell a CPU-bound run from one that waits,
 * and the rebuild's CPU budget a page (issue 47): drawing, brotli, gzip, data loads and writes, search text, V8's
 * collector and compiler threads, libuv's file system pool.
 * `--cold` empties the page cache before each run (root only): after a deploy most of a large archive's article
 * files are no longer in memory. Build the site first (`npm run rebuild` with the same DATA_DIR and OUT_DIR;
 * bench/generate-store.ts makes a store). Writes bench/results/rerender-all.json; the site's header keeps the
 * changed name until the next `--all` without it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseRerenderSummary, rebuild, type RerenderSummary } from '../scale/server.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const USAGE = 'usage: node bench/lab/rerender-all.ts DATA_DIR OUT_DIR [--cold]';

type Run = Omit<RerenderSummary, 'rendered' | 'newestText' | 'build'> & {
  case: 'template change' | 'same build';
  seconds: number;
  astroBuild: string;
  load: number;
  /** Shares of all cores' time over the run (Linux /proc/stat): busy, and idle waiting for the disk. */
  cpu: { busyPct: number; iowaitPct: number };
};

/** The machine's CPU time since boot, in clock ticks summed over all cores (the first line of /proc/stat). */
function cpuTicks(): { busy: number; iowait: number; total: number } {
  const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
  const busy = user + nice + system + irq + softirq + steal;
  return { busy, iowait, total: busy + idle + iowait };
}

/** What share of all cores' time went to work and to waiting on the disk between two readings, in percent. */
function cpuShare(from: ReturnType<typeof cpuTicks>, to: ReturnType<typeof cpuTicks>): Run['cpu'] {
  const total = to.total - from.total || 1;
  const pct = (ticks: number) => Math.round((ticks / total) * 1000) / 10;
  return { busyPct: pct(to.busy - from.busy), iowaitPct: pct(to.iowait - from.iowait) };
}

/** Empties the page cache (root only), so the run reads the store and the served files from disk. */
function dropPageCache(): void {
  execFileSync('sync');
  fs.writeFileSync('/proc/sys/vm/drop_caches', '3');
}

const [dataArg, outArg, ...flags] = process.argv.slice(2);
if (!dataArg || !outArg || dataArg.startsWith('--') || flags.some((f) => f !== '--cold')) throw new Error(USAGE);
const dataDir = path.resolve(dataArg);
const outDir = path.resolve(outArg);
if (!fs.existsSync(path.join(outDir, 'client'))) throw new Error(`${outDir}/client does not exist: build the site first (${USAGE})`);
const cold = flags.includes('--cold');
if (cold && process.getuid?.() !== 0) throw new Error('--cold empties the page cache, which needs root');

const machine = `${os.cpus().length} x ${os.cpus()[0]?.model.trim() ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
const siteName = `Meridian News ${new Date().toISOString().slice(0, 16)}`;
const runs: Run[] = [];
for (const name of ['template change', 'same build'] as const) {
  if (cold) dropPageCache();
  console.log(`[rerender-all] ${name}: npm run rebuild -- --all${cold ? ' (page cache emptied)' : ''}...`);
  const started = performance.now();
  const ticks = cpuTicks();
  const result = await rebuild(dataDir, outDir, ['--all'], { SITE_NAME: siteName });
  const cpu = cpuShare(ticks, cpuTicks());
  if (result.code !== 0) throw new Error(`rebuild --all failed:\n${result.output.slice(-3000)}`);
  const seconds = Math.round((performance.now() - started) / 100) / 10;
  const summary = parseRerenderSummary(result.output);
  if (!summary) throw new Error(`no "pages rendered" line in the rebuild's output:\n${result.output.slice(-3000)}`);
  const { rendered: _line, newestText, build: astroBuild, ...figures } = summary;
  const run: Run = { case: name, seconds, ...figures, astroBuild, load: Math.round(os.loadavg()[0]! * 100) / 100, cpu };
  console.log(
    `[rerender-all] ${name}: ${run.seconds} s in all; ${run.pages} pages in ${run.renderS} s on ${run.threads} threads, ` +
      `${run.pagesPerS} pages/s (${run.written} written); ` +
      `${newestText}; build ${run.astroBuild}; search ${run.search}; load ${run.load}; ` +
      `cores busy ${cpu.busyPct}%, waiting on the disk ${cpu.iowaitPct}%`,
  );
  if (run.cpuPerPage) {
    const c = run.cpuPerPage;
    console.log(
      `[rerender-all] ${name}: CPU a page ${c.total} ms: render ${c.render}, brotli ${c.brotli}, gzip ${c.gzip}, ` +
        `data load and writes ${c.dataLoadAndWrites}, search text ${c.searchText}, GC and compiler ${c.gcAndCompiler}, ` +
        `file system ${c.fileSystem}, other ${c.other}`,
    );
  }
  runs.push(run);
}
const file = path.join(ROOT, 'bench/results/rerender-all.json');
fs.writeFileSync(file, `${JSON.stringify({ takenAt: new Date().toISOString(), commit, machine, dataDir, cold, runs }, null, 2)}\n`);
console.log(`Written to ${path.relative(ROOT, file)}`);
