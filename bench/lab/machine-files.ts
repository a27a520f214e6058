/**
 * How long a feed and a sitemap take to render at archive scale, through the regeneration worker's
 * Renderer (data loaded on this thread, the file drawn by the render thread), and how much of that
 * holds this thread's event loop. Built site required (`npm run build`, or OUT_DIR).
 *
 *   node bench/lab/machine-files.ts [--articles 10000] [--runs 30] [--data DIR]
 *
 * `--data` reuses (or fills, when empty) a DATA_DIR; otherwise a temporary one is generated and removed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { parseConfig } from '../../src/config.ts';
import { startRuntime, stopRuntime } from '../../src/server/app.ts';
import { startRenderThread } from '../../src/server/publishing/render-thread.ts';
import { createSiteRenderer } from '../../src/server/publishing/service.ts';
import type { Renderer } from '../../src/server/publishing/worker.ts';
import { outDirOf } from '../../scripts/build-state.ts';
import { generateStore } from '../generate-store.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values } = parseArgs({
  options: { articles: { type: 'string', default: '10000' }, runs: { type: 'string', default: '30' }, data: { type: 'string' } },
});
const articles = Number(values.articles);
const runs = Number(values.runs);
const serverEntry = path.join(outDirOf(root), 'server/entry.mjs');
if (!fs.existsSync(serverEntry)) throw new Error(`no built site at ${serverEntry}: run npm run build first`);

const dataDir = values.data ?? fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-machine-files-'));
fs.mkdirSync(dataDir, { recursive: true });
if (fs.readdirSync(dataDir).length === 0) {
  console.log(`generating ${articles} articles into ${dataDir}`);
  await generateStore(dataDir, articles, (line) => console.log(line));
}
// Read by the render thread's config too (it copies this environment when it starts).
Object.assign(process.env, { DATA_DIR: dataDir, SEED: 'none' });
const runtime = await startRuntime(parseConfig({ DATA_DIR: dataDir, SEED: 'none' }));
// The newest month that is over: a full month's sitemap, as a publish of an old article rewrites it.
const months = (await runtime.store.articles.periods()).map((p) => p.period);
if (months.length === 0) throw new Error('the store has no published article');
const fullMonth = months[1] ?? months[0]!;

/** Wall time of one render and the part of it this thread's event loop was busy (the rest waited for the render thread). */
async function measure(render: Renderer, publicPath: string): Promise<{ wallMs: number; loopMs: number; bytes: number }> {
  const elu = performance.eventLoopUtilization();
  const started = performance.now();
  const outcome = await render(publicPath);
  const wallMs = performance.now() - started;
  const loopMs = performance.eventLoopUtilization(elu).active;
  if (outcome.kind !== 'page') throw new Error(`${publicPath} is missing`);
  return { wallMs, loopMs, bytes: outcome.body.byteLength };
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const thread = startRenderThread(serverEntry);
const render = createSiteRenderer(thread);
try {
  const paths = ['/rss.xml', '/section/world/rss.xml', '/sitemap.xml', `/sitemaps/${fullMonth}.xml`, '/news-sitemap.xml'];
  console.log(`${articles} articles, ${runs} runs each after 5 warm-up runs (median and p90, ms)`);
  console.log('| file | bytes | wall | wall p90 | event loop | event loop p90 |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const publicPath of paths) {
    for (let i = 0; i < 5; i++) await measure(render, publicPath);
    const samples = [];
    for (let i = 0; i < runs; i++) samples.push(await measure(render, publicPath));
    const wall = samples.map((s) => s.wallMs).sort((a, b) => a - b);
    const loop = samples.map((s) => s.loopMs).sort((a, b) => a - b);
    const cells = [quantile(wall, 0.5), quantile(wall, 0.9), quantile(loop, 0.5), quantile(loop, 0.9)].map((ms) => ms.toFixed(2));
    console.log(`| ${publicPath} | ${samples[0]!.bytes} | ${cells.join(' | ')} |`);
  }
} finally {
  await thread.close();
  await stopRuntime();
  if (!values.data) fs.rmSync(dataDir, { recursive: true, force: true });
}
