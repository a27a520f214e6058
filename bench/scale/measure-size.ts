/**
 * One archive size of bench:scale: generate the store, build it in full, start the server and measure each part of the
 * write path in turn (readers, saves, votes, the write bursts, publish -> live and -> findable, a restart, a rebuild
 * after one change). Each part is a function of its own; `measureSize` runs them in order and gathers the figures.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import type { ApiClient } from '../../tests/helpers/server.ts';
import type { Article } from '../../src/schemas/article.ts';
import { openStore } from '../../src/store/index.ts';
import { nginxAvailable, startFront, type RunningNginx } from '../../tests/helpers/nginx.ts';
import { generateStore, generateVotes, type GeneratedStore } from '../generate-store.ts';
import type { LoadJob, LoadResult } from '../load.ts';
import { runLoad } from '../children.ts';
import { quantile, round, type SizeFigures } from './figures.ts';
import type { Options } from './options.ts';
import {
  ALL_CPUS,
  cpuByThread,
  FINDABLE_RUNS,
  memoryOf,
  NETWORK_CPUS,
  PIN,
  pagesWritten,
  archivePagesWritten,
  parseRerenderSummary,
  pin,
  pinBench,
  rebuild,
  SERVER_BURST_CPUS,
  sleep,
  startScaleServer,
  waitForIdleQueue,
  waitUntil,
  type LoopDelay,
  type ScaleServer,
} from './server.ts';
import { burstJob, burstLine, burstOnce, signInAndList, startFeedServer, writesOf } from './writes.ts';
import { findableThroughPagefind, pagefindHead } from './search.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

type Detail = Record<string, number | string>;
type Side = 'front' | 'node';
type Say = (line: string) => void;

/** What the parts of one size's run share: the running server, nginx in front where there is one, the signed-in admin. */
type Bench = {
  server: ScaleServer;
  front: RunningNginx | undefined;
  admin: ApiClient;
  listed: Article[];
  readerOrigins: Partial<Record<Side, string>>;
  readerJob: (origin: string, durationS: number, saturate?: boolean) => LoadJob;
  options: Options;
  detail: Detail;
  say: Say;
};

const BODY = `<p>${'The council met again on Thursday to weigh the proposal and hear from residents who had waited for hours. '.repeat(60)}</p>`;
const p99 = (run: LoadResult) => round(run.p99ExactMs);
const sidesOf = (origins: Partial<Record<Side, string>>) => Object.entries(origins) as [Side, string][];

/** The store generated into `dataDir`: `articles` articles and `votesStored` votes. */
async function generate(dataDir: string, articles: number, votesStored: number, detail: Detail, say: Say): Promise<GeneratedStore> {
  say(`== ${articles.toLocaleString('en-US')} articles: generating...`);
  const generated = await generateStore(dataDir, articles, say);
  detail.generateS = round(generated.ms / 1000);
  detail.articleFilesMB = round(generated.bytes / 1048576);
  detail.avgWords = generated.words;
  const votes = await generateVotes(dataDir, generated.ids, votesStored);
  detail.votesStored = votesStored;
  detail.voteFiles = votes.files;
  say(
    `  ${articles} articles (${detail.articleFilesMB} MB of article files) and ${votesStored.toLocaleString('en-US')} votes in ${votes.files} bucket files`,
  );
  return generated;
}

/** `npm run rebuild -- --full` into `outDir`; its time in ms. */
async function buildFull(dataDir: string, outDir: string, detail: Detail, say: Say): Promise<number> {
  say('  full rebuild...');
  fs.rmSync(outDir, { recursive: true, force: true });
  const rebuildSource = fs.readFileSync(path.join(ROOT, 'scripts/rebuild.ts'), 'utf8');
  const hasFull = rebuildSource.includes('--full');
  const full = await rebuild(dataDir, outDir, hasFull ? ['--full'] : []);
  if (full.code !== 0) throw new Error(`full rebuild failed:\n${full.output.slice(-3000)}`);
  detail.fullRebuild = hasFull ? 'npm run rebuild -- --full' : 'npm run rebuild (always full on this branch)';
  say(`  full rebuild ${(full.ms / 1000).toFixed(1)} s`);
  return full.ms;
}

/** Readers alone (the cores split as in the bursts), and how many the cores serve at most. */
async function measureReadersIdle(bench: Bench): Promise<Partial<Record<Side, LoadResult>>> {
  const { server, readerJob, options, detail } = bench;
  const idle: Partial<Record<Side, LoadResult>> = {};
  for (const [side, origin] of sidesOf(bench.readerOrigins)) {
    pin(server.pid, SERVER_BURST_CPUS);
    await runLoad(readerJob(origin, 2));
    idle[side] = await runLoad(readerJob(origin, options.durationS));
    pin(server.pid, ALL_CPUS);
    const most = await runLoad(readerJob(origin, options.durationS, true));
    detail[side === 'front' ? 'readerRpsMax' : 'readerRpsMaxNode'] = Math.round(most.rps);
  }
  return idle;
}

/**
 * How many saves and publishes each size's p95 is taken from: with 10 publishes a p95 was the slowest one, and
 * two runs of one code disagreed by half (docs/performance.md, 2026-11-28).
 */
const SAVE_RUNS = 100;
const PUBLISH_RUNS = 30;

/**
 * Saves, one at a time: the API answers once the article file is on disk. The first ten warm the save and render
 * code up and are not counted: until the JIT has compiled them, the worker's first article renders take 20-45 ms
 * instead of 9 (at every size), and the saves queued behind them measured the warm-up rather than the archive.
 */
async function measureSaves(bench: Bench): Promise<number[]> {
  const { server, admin, listed, detail } = bench;
  const saveTimes: number[] = [];
  const SAVE_WARMUP = 10;
  for (let i = 0; i < SAVE_WARMUP + SAVE_RUNS; i++) {
    const article = listed[i % listed.length]!;
    if (i === SAVE_WARMUP) await waitForIdleQueue(server.url);
    const s0 = performance.now();
    const response = await admin.put(`/api/articles/${article.id}`, {
      title: `${article.title.replace(/ \(saved \d+\)$/, '')} (saved ${i})`,
    });
    await response.text();
    if (response.status !== 200) throw new Error(`save failed: ${response.status}`);
    if (i >= SAVE_WARMUP) saveTimes.push(performance.now() - s0);
  }
  detail.saveP50Ms = round(quantile(saveTimes, 0.5));
  await waitForIdleQueue(server.url);
  return saveTimes;
}

/** Votes from new visitors on the most-voted articles (the first generated ids carry the most votes). */
async function measureVotes(bench: Bench, voteIds: string[]): Promise<LoadResult> {
  const { server, options, detail } = bench;
  const voteRun = await runLoad({
    url: server.url,
    connections: 10,
    durationS: options.durationS,
    votes: { articleIds: voteIds, origin: server.url },
  });
  detail.votesPerS = Math.round(voteRun.rps);
  return voteRun;
}

/**
 * The bursts: the writers' process saves, votes and ingests a feed on the server's cores while readers arrive on the
 * network side's; the event-loop delay is read inside the server. One burst per way readers come in (the same writes
 * each time), so each reader run has a burst of its own. Answers the readers' runs and the longest event-loop block.
 */
async function measureBursts(
  bench: Bench,
  feedUrl: string,
  voteIds: string[],
): Promise<{ during: Partial<Record<Side, LoadResult>>; maxEventLoopBlockMs: number }> {
  const { server, admin, listed, readerJob, options, detail, say } = bench;
  const burst = await burstJob(server, admin, feedUrl, listed, voteIds, options);
  const during: Partial<Record<Side, LoadResult>> = {};
  const loops: Partial<Record<Side, LoopDelay>> = {};
  for (const [side, origin] of sidesOf(bench.readerOrigins)) {
    const run = await burstOnce(server, burst, readerJob(origin, options.durationS));
    during[side] = run.readers;
    loops[side] = run.loop;
    detail[side === 'front' ? 'burstWrites' : 'burstWritesNode'] = writesOf(run.wrote);
    say(`  burst (${writesOf(run.wrote)}), readers ${side === 'front' ? 'through nginx' : 'direct'}: ${burstLine(run)}`);
    await waitForIdleQueue(server.url);
  }
  const all = Object.values(loops);
  detail.eventLoopP99DuringBurstMs = Math.max(...all.map((l) => l.p99Ms));
  if (loops.front) detail.eventLoopMaxDuringBurstFrontMs = loops.front.maxMs;
  detail.eventLoopMaxDuringBurstNodeMs = loops.node!.maxMs;
  const worst = all.reduce((a, b) => (b.maxMs > a.maxMs ? b : a));
  detail.eventLoopLongestDelayCpuMs = worst.longestDelayCpuMs;
  detail.eventLoopMostCpuInOneDelayMs = Math.max(...all.map((l) => l.mostCpuInOneDelayMs));
  detail.eventLoopDelaysOver20Ms = all.map((l) => `${l.delaysOver20} (${l.delaysOver20Waiting} waiting)`).join(', ');
  detail.gcMaxPauseMs = Math.max(...all.map((l) => l.gcMaxMs));
  detail.serverCpuByThreadDuringBurst = cpuByThread(worst);
  // The server's longest block over both bursts (readers through nginx spare it their requests; the figure does not count on it).
  return { during, maxEventLoopBlockMs: Math.max(...all.map((l) => l.maxMs)) };
}

/** A tag of the generated archive per section (bench/generate-store.ts), so a bench publish joins a large tag's archive. */
const ARCHIVE_TAGS = { world: 'climate', business: 'markets', politics: 'elections', tech: 'ai' } as const;

/** Publish -> article and section page live (PUBLISH_RUNS runs), and the pages the worker wrote for each publish. */
async function measurePublishLive(bench: Bench): Promise<{ liveTimes: number[]; pages: number[] }> {
  const { server, admin, detail, say } = bench;
  const liveTimes: number[] = [];
  const pages: number[] = [];
  const archivePages: number[] = [];
  for (let run = 0; run < PUBLISH_RUNS; run++) {
    const section = (['world', 'business', 'politics', 'tech'] as const)[run % 4];
    const title = `Scale live story ${run} ${Date.now()}`;
    const mark = server.output().length;
    const p0 = performance.now();
    // Tags and an author the generated archive uses too (issue 35): their archives' first pages are part of each publish.
    const created = await admin.post('/api/articles', {
      title,
      bodyHtml: BODY,
      section,
      status: 'published',
      tags: ['bench', ARCHIVE_TAGS[section]],
      authorName: 'Bench Reporter',
    });
    if (created.status !== 201) throw new Error(`publish failed: ${created.status} ${await created.text()}`);
    const article = (await created.json()) as Article;
    const live = await waitUntil(60_000, async () => {
      const [page, listing] = await Promise.all([
        fetch(`${server.url}/article/${article.slug}`).then((r) => r.text()),
        fetch(`${server.url}/section/${section}`).then((r) => r.text()),
      ]);
      return page.includes(title) && listing.includes(title);
    });
    if (!live) throw new Error(`published article ${article.slug} not live within 60 s`);
    liveTimes.push(performance.now() - p0);
    await waitForIdleQueue(server.url);
    await sleep(200);
    const log = server.output().slice(mark);
    pages.push(pagesWritten(log));
    archivePages.push(archivePagesWritten(log));
  }
  say(`  publish -> live p95 ${quantile(liveTimes, 0.95).toFixed(0)} ms; pages written per publish: ${pages.join(', ')}`);
  say(`  of which tag and author archive files: ${archivePages.join(', ')}`);
  detail.pagesPerPublishMax = Math.max(...pages);
  detail.archivePagesPerPublishMax = Math.max(...archivePages);
  return { liveTimes, pages };
}

/**
 * The pages the worker writes for one live update (issue 35), the median of 5 updates to a freshly
 * published article (so it is in both feeds, the most an update writes): a constant at any archive size.
 */
async function measureLiveUpdates(bench: Bench): Promise<number> {
  const { server, admin, detail, say } = bench;
  const created = await admin.post('/api/articles', {
    title: `Scale live coverage ${Date.now()}`,
    bodyHtml: BODY,
    section: 'world',
    status: 'published',
  });
  if (created.status !== 201) throw new Error(`publish failed: ${created.status} ${await created.text()}`);
  const article = (await created.json()) as Article;
  await admin.put(`/api/articles/${article.id}/live`, { status: 'live' });
  await waitForIdleQueue(server.url);
  const pages: number[] = [];
  for (let run = 0; run < 5; run++) {
    await sleep(200);
    const mark = server.output().length;
    const posted = await admin.post(`/api/articles/${article.id}/updates`, { bodyHtml: `<p>Scale update ${run}.</p>` });
    if (posted.status !== 201) throw new Error(`live update failed: ${posted.status} ${await posted.text()}`);
    const shown = await waitUntil(60_000, async () => {
      const response = await fetch(`${server.url}/article/${article.slug}/live.json`);
      return response.ok && ((await response.json()) as { total: number }).total === run + 1;
    });
    if (!shown) throw new Error(`live update ${run} of ${article.slug} not shown within 60 s`);
    await waitForIdleQueue(server.url);
    await sleep(200);
    pages.push(pagesWritten(server.output().slice(mark)));
  }
  say(`  pages written per live update: ${pages.join(', ')}`);
  detail.pagesPerLiveUpdateMax = Math.max(...pages);
  return quantile(pages, 0.5);
}

/**
 * Publish -> findable through the Pagefind index a reader's browser loads, the median of FINDABLE_RUNS publishes (one
 * varies by the debounce and the queue's other work). The index's head is polled over HTTP; the browser searches from
 * the moment it changed, until it finds the article. Answers the median in seconds.
 */
async function measureFindable(bench: Bench, browser: Browser): Promise<number> {
  const { server, admin, detail, say } = bench;
  const searchMark = server.output().length;
  const findableTimes: number[] = [];
  for (let run = 0; run < FINDABLE_RUNS; run++) {
    const word = `zephyrine${Date.now().toString(36)}${run}`;
    const head = await pagefindHead(server.url);
    let changed = false;
    const f0 = performance.now();
    const created = (await (
      await admin.post('/api/articles', {
        title: `Scale findable ${word}`,
        bodyHtml: `<p>The ${word} story.</p>`,
        section: 'world',
        status: 'published',
      })
    ).json()) as Article;
    const found = await waitUntil(
      1_200_000,
      async () => {
        changed ||= (await pagefindHead(server.url)) !== head;
        return changed && findableThroughPagefind(browser, server.url, word, `/article/${created.slug}`);
      },
      50,
    );
    if (!found) throw new Error(`published article ${created.slug} not findable through Pagefind within 1,200 s`);
    findableTimes.push(performance.now() - f0);
    await waitForIdleQueue(server.url);
  }
  const findableS = round(quantile(findableTimes, 0.5) / 1000);
  detail.findableRunsS = findableTimes.map((ms) => round(ms / 1000)).join(', ');
  say(`  publish -> findable through Pagefind: median ${findableS} s (${detail.findableRunsS} s)`);
  // What those publishes re-indexed: the search bundles and their pages (the head, at most HEAD_MAX).
  detail.findableReindexed = [
    ...server
      .output()
      .slice(searchMark)
      .matchAll(/search index rebuilt: (\d+) pages in (\d+) ms \(bundle ([^)]+)\)/g),
  ]
    .map((m) => `${m[3]}: ${m[1]} pages, ${m[2]} ms`)
    .join('; ');
  say(`  re-indexed for it: ${detail.findableReindexed || 'nothing logged'}`);
  return findableS;
}

/** A restart after a clean stop (a deploy): the store reads the listing snapshot its close wrote, not every article file. */
async function measureRestart(dataDir: string, outDir: string, workDir: string, detail: Detail, say: Say): Promise<void> {
  const restarted = await startScaleServer(dataDir, outDir, workDir);
  detail.restartS = round(restarted.startMs / 1000, 2);
  await restarted.stop();
  say(`  restart after a clean stop: listening after ${detail.restartS} s`);
}

/** One article changed, then `npm run rebuild` (incremental where the branch has it); its time in ms. */
async function measureOneChangeRebuild(
  dataDir: string,
  outDir: string,
  generated: GeneratedStore,
  detail: Detail,
  say: Say,
): Promise<number> {
  const store = await openStore(dataDir);
  try {
    const one = (await store.articles.get(generated.ids[Math.floor(generated.articles / 2)]!))!;
    await store.articles.replace({ ...one, title: `${one.title} (changed)`, updatedAt: new Date().toISOString() });
  } finally {
    await store.close();
  }
  const incremental = await rebuild(dataDir, outDir, []);
  if (incremental.code !== 0) throw new Error(`rebuild after one change failed:\n${incremental.output.slice(-3000)}`);
  say(`  rebuild after one change ${(incremental.ms / 1000).toFixed(1)} s`);
  // What it rendered and re-indexed (everything the server phase changed counts too), and where the time went.
  for (const line of incremental.output
    .split('\n')
    .filter((l) => /^ {2}(pages rendered|pages kept|pages removed|search index|phases) /.test(l)))
    say(`  ${line.trim()}`);
  detail.rebuildOneChange = /\[rebuild\] done: (.*)/.exec(incremental.output)?.[1] ?? '';
  detail.rebuildOneChangePhases = /^ {2}phases +(.*)$/m.exec(incremental.output)?.[1] ?? '';
  return incremental.ms;
}

/**
 * `npm run rebuild -- --all` (issue 36): the bundle built again and every page rendered with it in place, on all
 * cores. Its time in s and the pages per second of its render phase (the figures its summary prints).
 */
async function measureRerenderAll(
  dataDir: string,
  outDir: string,
  detail: Detail,
  say: Say,
): Promise<{ seconds: number; pagesPerS: number }> {
  say('  every page rendered again (--all)...');
  const all = await rebuild(dataDir, outDir, ['--all']);
  if (all.code !== 0) throw new Error(`rebuild --all failed:\n${all.output.slice(-3000)}`);
  const summary = parseRerenderSummary(all.output);
  detail.rerenderAll = summary?.rendered ?? '';
  detail.rerenderAllBuild = summary?.build ?? '';
  detail.rerenderAllSearch = summary?.search ?? '';
  detail.rerenderAllNewest = summary?.newestText ?? '';
  say(
    `  --all ${(all.ms / 1000).toFixed(1)} s: ${detail.rerenderAll}; newest first ${detail.rerenderAllNewest}; build ${detail.rerenderAllBuild}; search ${detail.rerenderAllSearch}`,
  );
  return { seconds: round(all.ms / 1000), pagesPerS: summary?.pagesPerS ?? NaN };
}

/** Every figure of one archive size (see the module's opening). */
export async function measureSize(
  articles: number,
  votesStored: number,
  options: Options,
  workDir: string,
  browser: Browser,
  say: Say,
): Promise<SizeFigures> {
  const dataDir = path.join(workDir, `data-${articles}`);
  const outDir = path.join(ROOT, '.out', `scale-${articles}`);
  const detail: Detail = {};
  const generated = await generate(dataDir, articles, votesStored, detail, say);
  const fullMs = await buildFull(dataDir, outDir, detail, say);

  const server = await startScaleServer(dataDir, outDir, workDir);
  // nginx in front (deploy/nginx.conf), as docs/serving.md recommends for readers: it serves the article
  // page from disk while the server takes the writes, on the network side's core.
  let front: RunningNginx | undefined;
  if (nginxAvailable()) {
    front = await startFront(
      { serveDir: path.join(outDir, 'client'), dataDir, serverPort: Number(new URL(server.url).port) },
      PIN ? { wrap: ['/usr/bin/taskset', '-c', NETWORK_CPUS] } : {},
    );
  }
  detail.readers = front
    ? `${options.readerRate} req/s through deploy/nginx.conf (readerP99*NodeMs: the same straight to the server)`
    : `${options.readerRate} req/s straight to the server (no nginx at /usr/sbin/nginx)`;
  pinBench(NETWORK_CPUS);
  detail.cores = PIN
    ? `load generators${front ? ' and nginx' : ''} on CPU ${NETWORK_CPUS}, the server on CPUs ${ALL_CPUS} (${SERVER_BURST_CPUS} during the bursts, with the writers' load at nice 5)`
    : 'shared';
  const feeds = await startFeedServer();
  try {
    const t0 = performance.now();
    // A search waits for the text index, which is built after the server listens.
    await fetch(`${server.url}/api/search?q=election`).then((r) => r.text());
    detail.textIndexReadyAfterListenS = round((performance.now() - t0) / 1000, 2);
    const memory = memoryOf(server.pid);
    detail.rssAfterStartMB = memory.rssMB;
    say(
      `  server listening after ${(server.startMs / 1000).toFixed(1)} s; text index ready ${detail.textIndexReadyAfterListenS} s later; RSS ${memory.rssMB} MB (peak ${memory.peakMB} MB)`,
    );
    const { admin, listed } = await signInAndList(server);
    const sample = listed[0]!;
    const bench: Bench = {
      server,
      front,
      admin,
      listed,
      options,
      detail,
      say,
      readerOrigins: front ? { front: front.url, node: server.url } : { node: server.url },
      // Readers ask for one article page, through nginx (where there is one) and straight from the server,
      // arriving at a steady rate; `saturate` asks as fast as 10 connections go (what the cores can serve).
      readerJob: (origin, durationS, saturate = false) => ({
        url: `${origin}/article/${sample.slug}`,
        connections: 10,
        durationS,
        ...(saturate ? {} : { rate: options.readerRate }),
      }),
    };
    const readerLine = (runs: Partial<Record<Side, LoadResult>>) =>
      [
        runs.front && `${p99(runs.front)} ms through nginx (${Math.round(runs.front.rps)} req/s)`,
        runs.node && `${p99(runs.node)} ms direct (${Math.round(runs.node.rps)} req/s)`,
      ]
        .filter(Boolean)
        .join(', ');

    const idle = await measureReadersIdle(bench);
    say(`  readers idle: p99 ${readerLine(idle)}; at most ${detail.readerRpsMax ?? detail.readerRpsMaxNode} req/s`);
    const saveTimes = await measureSaves(bench);
    const voteIds = generated.ids.slice(0, 50);
    const voteRun = await measureVotes(bench, voteIds);
    say(`  saves p95 ${quantile(saveTimes, 0.95).toFixed(1)} ms; votes p99 ${voteRun.p99} ms (${Math.round(voteRun.rps)}/s)`);
    await waitForIdleQueue(server.url);

    const { during, maxEventLoopBlockMs } = await measureBursts(bench, feeds.url, voteIds);
    const headline: Side = front ? 'front' : 'node';
    detail.readerP99IdleNodeMs = p99(idle.node!);
    detail.readerP99DuringSavesNodeMs = p99(during.node!);
    detail.readerRpsIdle = Math.round(idle[headline]!.rps);
    detail.readerRpsDuringSaves = Math.round(during[headline]!.rps);
    if (front) {
      detail.readerRpsIdleNode = Math.round(idle.node!.rps);
      detail.readerRpsDuringSavesNode = Math.round(during.node!.rps);
    }

    const { liveTimes, pages } = await measurePublishLive(bench);
    const pagesPerLiveUpdate = await measureLiveUpdates(bench);
    const findableS = await measureFindable(bench, browser);
    await front?.stop();
    await server.stop();
    pinBench(ALL_CPUS);

    await measureRestart(dataDir, outDir, workDir, detail, say);
    const oneChangeMs = await measureOneChangeRebuild(dataDir, outDir, generated, detail, say);
    const rerenderAll = await measureRerenderAll(dataDir, outDir, detail, say);

    return {
      articles,
      saveP95Ms: round(quantile(saveTimes, 0.95)),
      voteP99Ms: voteRun.p99,
      publishLiveP95Ms: Math.round(quantile(liveTimes, 0.95)),
      findableS,
      rebuildOneChangeS: round(oneChangeMs / 1000),
      fullRebuildS: round(fullMs / 1000),
      rerenderAllS: rerenderAll.seconds,
      rerenderPagesPerS: rerenderAll.pagesPerS,
      startS: round(server.startMs / 1000, 2),
      rssMB: memory.peakMB,
      readerP99IdleMs: p99(idle[headline]!),
      readerP99DuringSavesMs: p99(during[headline]!),
      maxEventLoopBlockMs,
      pagesPerPublish: quantile(pages, 0.5),
      pagesPerLiveUpdate,
      detail,
    };
  } finally {
    await front?.stop();
    await server.stop();
    pinBench(`0-${os.cpus().length - 1}`);
    await feeds.close();
    if (!options.keep) {
      fs.rmSync(dataDir, { recursive: true, force: true });
      fs.rmSync(outDir, { recursive: true, force: true });
    }
  }
}
