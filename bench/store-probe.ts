/**
 * The store alone, in a process of its own (bench:scale --store-only runs it): opens a DATA_DIR,
 * times the start and the text index, reads the peak memory, then times a burst of saves, votes and
 * inserts with the event-loop delay histogram running, then the close and a reopen from the listing
 * snapshot that close wrote. Prints one JSON line.
 */
import fs from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { openStore } from '../src/store/index.ts';

const dir = process.argv[2];
if (!dir) throw new Error('usage: node bench/store-probe.ts DATA_DIR');
const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil(q * values.length) - 1)]!;
const peakMB = () => Math.round(Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))![1]) / 1024);

const t0 = performance.now();
const cpu0 = process.threadCpuUsage();
const store = await openStore(dir);
const openS = (performance.now() - t0) / 1000;
// The main thread's CPU time for the open: what the code costs, whatever else the machine runs.
const openCpu = process.threadCpuUsage(cpu0);
const openCpuS = (openCpu.user + openCpu.system) / 1e6;
const rssOpenMB = Math.round(process.memoryUsage().rss / 1048576);
// The main thread's heap after start: the listing indexes, slugs, origins and the bucketed collections.
globalThis.gc?.();
const mainHeapMB = Math.round(process.memoryUsage().heapUsed / 1048576);
await store.articles.search('election', {}, { offset: 0, limit: 12 });
const textReadyS = (performance.now() - t0) / 1000;
// The text index's own heap, measured inside its worker thread (lowdb only).
const textIndex = await (store.articles as { textReady?: () => Promise<{ heapMB: number; buildMs: number }> }).textReady?.();

const histogram = monitorEventLoopDelay({ resolution: 1 });
histogram.enable();
await new Promise((resolve) => setTimeout(resolve, 100));
histogram.reset();
const run = Date.now().toString(36);
const listed = await store.articles.list({ statuses: ['published'] }, { offset: 0, limit: 300 });
const saves: number[] = [];
const votes: number[] = [];
const timed = async (into: number[], call: () => Promise<unknown>) => {
  const s = performance.now();
  await call();
  into.push(performance.now() - s);
};
// Four writers at once, as a newsroom's editors, readers' votes and a feed would be.
for (let round = 0; round < 100; round++) {
  const article = listed[round % listed.length]!;
  const work: Promise<void>[] = [
    timed(saves, () =>
      store.articles.replace({
        ...article,
        title: `${article.title} *`,
        bodyHtml: `${article.bodyHtml}<p>Edit ${round}.</p>`,
        updatedAt: new Date().toISOString(),
      }),
    ),
    timed(saves, () =>
      store.articles.insert({
        ...article,
        id: `probe-${run}-${round}`,
        slug: `probe-${run}-${round}`,
        publishedAt: new Date().toISOString(),
      }),
    ),
  ];
  for (let v = 0; v < 10; v++)
    work.push(timed(votes, () => store.counters.vote(listed[v]!.id, `probe${run}r${round}v${v}`, v % 3 ? 'like' : 'dislike')));
  await Promise.all(work);
  // A reader's listing between writes.
  await store.articles.list({ statuses: ['published'], section: article.section }, { offset: 0, limit: 12 });
}
histogram.disable();
// Searches are reads whose cost grows with the matches (every matching article is scored): timed on their own.
const searches: number[] = [];
for (const query of ['election', 'budget reform', 'Lisbon', 'championship final', 'Amara Okafor', 'satellite'])
  await timed(searches, () => store.articles.search(query, {}, { offset: 0, limit: 12 }));
const c0 = performance.now();
await store.close();
const closeS = (performance.now() - c0) / 1000;
// The next open after that clean close reads the listing snapshot the close wrote.
const r0 = performance.now();
const reopened = await openStore(dir);
const reopenS = (performance.now() - r0) / 1000;
await reopened.close();
console.log(
  JSON.stringify({
    openS: Number(openS.toFixed(2)),
    openCpuS: Number(openCpuS.toFixed(2)),
    closeS: Number(closeS.toFixed(2)),
    reopenS: Number(reopenS.toFixed(2)),
    textReadyS: Number(textReadyS.toFixed(2)),
    rssOpenMB,
    peakRssMB: peakMB(),
    mainHeapMB,
    textIndexHeapMB: textIndex?.heapMB ?? null,
    textIndexBuildS: textIndex ? Number((textIndex.buildMs / 1000).toFixed(2)) : null,
    saveP95Ms: Number(quantile(saves, 0.95).toFixed(1)),
    voteP99Ms: Number(quantile(votes, 0.99).toFixed(1)),
    maxEventLoopBlockMs: Number((histogram.max / 1e6).toFixed(1)),
    eventLoopP99Ms: Number((histogram.percentile(99) / 1e6).toFixed(1)),
    searchMaxMs: Number(Math.max(...searches).toFixed(1)),
  }),
);
