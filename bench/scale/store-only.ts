/** bench:scale --store-only: the store alone at each size, no build or server (bench/store-probe.ts); bench/results/scale-store.json. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateStore, generateVotes } from '../generate-store.ts';
import { runNode } from '../children.ts';
import { table } from './figures.ts';
import type { Options } from './options.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

type StoreFigures = {
  articles: number;
  votesStored: number;
  openS: number;
  openCpuS: number;
  closeS: number;
  reopenS: number;
  textReadyS: number;
  rssOpenMB: number;
  peakRssMB: number;
  mainHeapMB: number;
  textIndexHeapMB: number | null;
  textIndexBuildS: number | null;
  saveP95Ms: number;
  voteP99Ms: number;
  maxEventLoopBlockMs: number;
  eventLoopP99Ms: number;
  searchMaxMs: number;
};

/**
 * --store-only: the store without a build or a server (minutes instead of an hour at 100,000): start,
 * memory and the write path measured in bench/store-probe.ts, written to bench/results/scale-store.json.
 */
export async function storeOnly(options: Options, machine: string, say: (line: string) => void): Promise<void> {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-scale-store-'));
  const largest = options.sizes.at(-1)!;
  const figures: StoreFigures[] = [];
  const loads: number[] = [];
  try {
    for (const articles of options.sizes) {
      const dataDir = path.join(workDir, `data-${articles}`);
      say(`== ${articles.toLocaleString('en-US')} articles (store only): generating...`);
      const generated = await generateStore(dataDir, articles, say);
      const votesStored = articles === largest ? Math.max(options.votes, articles * 10) : articles * 10;
      await generateVotes(dataDir, generated.ids, votesStored);
      const probe = await runNode(path.join(ROOT, 'bench/store-probe.ts'), [dataDir], { NODE_OPTIONS: '--expose-gc' }, 1_800_000);
      const line = probe.output.trim().split('\n').at(-1) ?? '';
      if (probe.code !== 0 || !line.startsWith('{')) throw new Error(`store probe failed: ${probe.output.slice(-2000)}`);
      figures.push({ articles, votesStored, ...(JSON.parse(line) as Omit<StoreFigures, 'articles' | 'votesStored'>) });
      loads.push(Number(os.loadavg()[0]!.toFixed(2)));
      say(`  ${line}`);
      if (!options.keep) fs.rmSync(dataDir, { recursive: true, force: true });
    }
  } finally {
    if (!options.keep) fs.rmSync(workDir, { recursive: true, force: true });
  }
  const keys = [
    'votesStored',
    'openS',
    'openCpuS',
    'closeS',
    'reopenS',
    'textReadyS',
    'rssOpenMB',
    'peakRssMB',
    'mainHeapMB',
    'textIndexHeapMB',
    'textIndexBuildS',
    'saveP95Ms',
    'voteP99Ms',
    'maxEventLoopBlockMs',
    'eventLoopP99Ms',
    'searchMaxMs',
  ] as const;
  console.log(`\nMeridian News bench:scale --store-only; ${machine}; 1-minute load after each size: ${loads.join(', ')}\n`);
  console.log(
    table(
      ['figure', ...figures.map((f) => `${f.articles.toLocaleString('en-US')} articles`)],
      keys.map((key) => [key, ...figures.map((f) => String(f[key]))]),
    ),
  );
  const file = path.join(ROOT, 'bench/results/scale-store.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(
    file,
    `${JSON.stringify({ takenAt: new Date().toISOString(), machine, options, loadAverages: loads, sizes: figures }, null, 2)}\n`,
  );
  console.log(`\nWritten to ${path.relative(ROOT, file)}`);
}
