/**
 * `npm run bench:scale [-- --sizes 1000,10000,100000] [--votes N] [--duration S] [--reader-rate N] [--keep] [--store-only]`
 * `[--bursts-only DIR [--bursts N]]`:
 * measures the write path at several archive sizes (saves, votes, publish -> live and -> findable,
 * rebuilds (incremental, --full, --all), start time, memory, reader latency during writes, the server's event-loop blocking, pages
 * per publish), prints a table with the largest/smallest ratios against their targets and writes
 * bench/results/scale.json. It only measures: nothing here is a timed test. This is the driver: each size's
 * parts are in bench/scale/measure-size.ts, `--store-only` in bench/scale/store-only.ts, and `--bursts-only`
 * is the investigation in bench/lab/scale-bursts.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { children } from './children.ts';
import { launchBrowser } from './browser.ts';
import { burstsOnly } from './lab/scale-bursts.ts';
import { checks, table, type SizeFigures } from './scale/figures.ts';
import { measureSize } from './scale/measure-size.ts';
import { parseOptions } from './scale/options.ts';
import { storeOnly } from './scale/store-only.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const started = performance.now();
const say = (line: string) => console.log(`[scale ${((performance.now() - started) / 1000).toFixed(0).padStart(5)} s] ${line}`);

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const machine = `${os.cpus().length} x ${os.cpus()[0]?.model.trim() ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}, Node ${process.version}`;
  if (options.storeOnly) {
    await storeOnly(options, machine, say);
    return;
  }
  if (options.burstsOnly) {
    await burstsOnly(options, path.resolve(options.burstsOnly), machine, say);
    return;
  }
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-scale-'));
  const largest = options.sizes.at(-1)!;
  say(
    `sizes ${options.sizes.join(', ')}; ${options.durationS} s per load run; machine: ${machine}; load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const sizes: SizeFigures[] = [];
  const loads: number[] = [];
  const browser = await launchBrowser();
  try {
    for (const articles of options.sizes) {
      // A million votes already stored at the largest size; ten per article below it.
      sizes.push(
        await measureSize(
          articles,
          articles === largest ? Math.max(options.votes, articles * 10) : articles * 10,
          options,
          workDir,
          browser,
          say,
        ),
      );
      loads.push(Number(os.loadavg()[0]!.toFixed(2)));
    }
  } finally {
    await browser.close().catch(() => {});
    for (const child of children) child.kill('SIGKILL');
    if (!options.keep) fs.rmSync(workDir, { recursive: true, force: true });
    else say(`kept: ${workDir}`);
  }

  const keys = [
    'saveP95Ms',
    'voteP99Ms',
    'publishLiveP95Ms',
    'findableS',
    'rebuildOneChangeS',
    'fullRebuildS',
    'rerenderAllS',
    'rerenderPagesPerS',
    'startS',
    'rssMB',
    'readerP99IdleMs',
    'readerP99DuringSavesMs',
    'maxEventLoopBlockMs',
    'pagesPerPublish',
    'pagesPerLiveUpdate',
  ] as const;
  console.log(
    `\nMeridian News bench:scale; ${machine}; ${((performance.now() - started) / 1000).toFixed(0)} s in all; 1-minute load after each size: ${loads.join(', ')}\n`,
  );
  console.log(
    table(
      ['figure', ...sizes.map((s) => `${s.articles.toLocaleString('en-US')} articles`)],
      keys.map((key) => [key, ...sizes.map((s) => String(s[key] ?? 'n/a'))]),
    ),
  );
  const results = checks(sizes);
  console.log(
    `\n${table(
      ['check', 'value', 'target', 'verdict'],
      results.map((c) => [c.figure, c.value, c.target, c.ok === undefined ? '' : c.ok ? 'ok' : 'MISSED']),
    )}`,
  );
  const file = path.join(ROOT, 'bench/results/scale.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(
    file,
    `${JSON.stringify({ takenAt: new Date().toISOString(), machine, options, loadAverages: loads, sizes, checks: results }, null, 2)}\n`,
  );
  console.log(`\nWritten to ${path.relative(ROOT, file)}`);
}

main().catch((error: unknown) => {
  console.error(`[scale] FAILED: ${(error as Error).stack ?? String(error)}`);
  for (const child of children) child.kill('SIGKILL');
  process.exit(1);
});
