/**
 * `npm run rebuild -- --all` (issue 36): every page drawn again by a new build while the site stays up.
 * `astro build` makes only the bundle and the fixed pages (PRERENDER_DATA_PAGES=false) in a staging
 * folder; its static files join the served folder first (new hashed assets beside the old ones), then
 * every public path is rendered by the new bundle's render twins, the path runtime regeneration takes,
 * on RENDER_THREADS threads and written in place, one rename each, so a reader gets a whole page of the
 * old build or of the new. Then the paths the data no longer has go, search is indexed afresh, the new
 * server bundle is swapped in as `--full` swaps it, and the render state is recorded.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { getConfig } from '../src/config.ts';
import { searchDay } from '../src/server/clock.ts';
import { ENCODINGS, isCompressedTwin, type Compressor, type Twins } from '../src/server/publishing/compress.ts';
import { deleteServedFile, writeFileAtomic, type FileOutcome } from '../src/server/publishing/files.ts';
import {
  articlePath,
  fileForPath,
  listRenderedPaths,
  listSearchBundles,
  planPublicPaths,
  type OrderMark,
} from '../src/server/publishing/paths.ts';
import { computePageInputs, readRenderState } from '../src/server/publishing/render-inputs.ts';
import { renderStateFileFor, writeRenderStateFile } from '../src/server/publishing/render-state.ts';
import { takeRenderJournal } from '../src/server/publishing/render-journal.ts';
import { startRenderPool } from '../src/server/publishing/render-thread.ts';
import { createRegenerator, pageStatesOf } from '../src/server/publishing/regenerator.ts';
import { indexedPart } from '../src/server/publishing/search-index.ts';
import { closeSearchIndexer, searchIndexerVersion, syncSearchBundles } from '../src/server/publishing/search-indexer.ts';
import { createSiteRenderer } from '../src/server/publishing/service.ts';
import { cpuByThreadName, processCpuMicros, threadCpuMicros } from '../src/server/thread-cpu.ts';
import { sourceStamp, writeBuildInfo } from './build-state.ts';
import { createProgress, type ProgressReporter } from './progress.ts';
import { elapsed, runAstroBuild, say, SHARED_FULL_BUILD, swapIn, type DataSnapshot } from './rebuild-full.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Pages in flight per render thread: one drawn while the next one's data is loaded on this thread. */
const IN_FLIGHT_PER_THREAD = 2;

/** The twins the build made beside a staged file (the precompress step), read instead of compressed again. */
const stagedTwins =
  (stagingClient: string, clientDir: string): Compressor =>
  async (file) => {
    const staged = path.join(stagingClient, path.relative(clientDir, file));
    const twins: Twins = {};
    for (const { name, suffix } of ENCODINGS) {
      const twin = await fsp.readFile(staged + suffix).catch(() => undefined);
      if (twin) twins[name] = twin;
    }
    return twins;
  };

/** Every file of the staged client folder (twins aside) into the served one, each by writeFileAtomic with its staged twins. */
async function copyStaticFiles(stagingClient: string, clientDir: string): Promise<number> {
  const compress = stagedTwins(stagingClient, clientDir);
  // Hashed assets first: a page of the new build must find them when it lands.
  const files = (fs.readdirSync(stagingClient, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((entry) => entry.isFile() && !isCompressedTwin(entry.name))
    .map((entry) => path.relative(stagingClient, path.join(entry.parentPath, entry.name)))
    .sort((a, b) => Number(!a.startsWith('_astro')) - Number(!b.startsWith('_astro')) || a.localeCompare(b));
  let written = 0;
  for (const file of files) {
    const outcome = await writeFileAtomic(path.join(clientDir, file), fs.readFileSync(path.join(stagingClient, file)), compress);
    if (outcome === 'written') written++;
  }
  return written;
}

/**
 * Where the CPU of a render phase went, in µs (issue 47): the render threads' drawing (Astro and React),
 * brotli and gzip, and loading the bundle; this thread's data loads, write calls and bookkeeping, and
 * its comparison of the pages' search text; V8's helper threads (the collector and the compiler, for
 * every thread), libuv's pool (the file system calls) and whatever else ran.
 */
type CpuBudget = {
  render: number;
  brotli: number;
  gzip: number;
  bundle: number;
  main: number;
  searchText: number;
  v8Helpers: number;
  fileSystem: number;
  other: number;
};

/** The summary line of a CPU budget: each part as a page's share in ms (the threads' loading of the bundle in all, too). */
function cpuBudgetLine(cpu: CpuBudget, pages: number): string {
  const perPage = (micros: number) => (micros / 1000 / Math.max(pages, 1)).toFixed(2);
  const total = Object.values(cpu).reduce((sum, micros) => sum + micros, 0);
  return (
    `  CPU a page          ${perPage(total)} ms: render ${perPage(cpu.render)}, brotli ${perPage(cpu.brotli)}, gzip ${perPage(cpu.gzip)} ` +
    `(render threads); data load and writes ${perPage(cpu.main)}, search text ${perPage(cpu.searchText)} (main thread); ` +
    `GC and compiler ${perPage(cpu.v8Helpers)} (V8's threads); file system ${perPage(cpu.fileSystem)} (libuv's pool); ` +
    `other ${perPage(cpu.other)}; loading the bundle ${perPage(cpu.bundle)} (${(cpu.bundle / 1e6).toFixed(1)} s in all)`
  );
}

/**
 * Renders `paths` with the bundle at `serverEntry` on `threads` render threads into `clientDir`, in their
 * order; answers what happened to the files, the article paths whose indexed part (indexedPart) changed or
 * went, when (ms after the start) every path before each of `marks` had been drawn, and where the CPU went.
 */
async function renderEveryPath(
  paths: readonly string[],
  marks: readonly OrderMark[],
  serverEntry: string,
  clientDir: string,
  threads: number,
  progress: ProgressReporter,
): Promise<{
  counts: Record<FileOutcome, number>;
  textChanged: Set<string>;
  reached: Array<OrderMark & { ms: number }>;
  cpu: CpuBudget;
}> {
  const counts: Record<FileOutcome, number> = { written: 0, unchanged: 0, deleted: 0, absent: 0 };
  const textChanged = new Set<string>();
  const started = performance.now();
  const processCpuStart = processCpuMicros();
  const mainCpuStart = threadCpuMicros();
  const threadsStart = cpuByThreadName();
  let searchText = 0;
  // Paths are taken in order but finish out of it: a mark is reached once every path before it is drawn.
  const drawn = new Uint8Array(paths.length);
  let allBefore = 0;
  const reached: Array<OrderMark & { ms: number }> = [];
  const pending = [...marks].sort((a, b) => a.end - b.end);
  const noteDrawn = (index: number) => {
    drawn[index] = 1;
    while (allBefore < paths.length && drawn[allBefore]) allBefore++;
    while (pending.length && pending[0]!.end <= allBefore) reached.push({ ...pending.shift()!, ms: performance.now() - started });
  };
  // At the server's background priority: a server answering readers on this machine goes first.
  const pool = startRenderPool(serverEntry, threads);
  const regenerator = createRegenerator({
    clientDir,
    render: createSiteRenderer(pool),
    compress: (file, body) => pool.compress(file, body),
  });
  let next = 0;
  let done = 0;
  try {
    const lanes = Array.from({ length: threads * IN_FLIGHT_PER_THREAD }, async () => {
      while (next < paths.length) {
        const index = next++;
        const publicPath = paths[index]!;
        const article = publicPath.startsWith('/article/');
        const before = article ? await fsp.readFile(fileForPath(clientDir, publicPath), 'utf8').catch(() => undefined) : undefined;
        const { outcome, body } = await regenerator.regenerate(publicPath);
        counts[outcome]++;
        if (article && outcome !== 'unchanged') {
          const compared = threadCpuMicros();
          const after = body && Buffer.from(body).toString('utf8');
          if (before === undefined || after === undefined || indexedPart(before) !== indexedPart(after)) textChanged.add(publicPath);
          searchText += threadCpuMicros() - compared;
        }
        noteDrawn(index);
        progress.update('render', ++done, paths.length);
      }
    });
    await Promise.all(lanes);
  } finally {
    progress.stop();
    await pool.close();
  }
  const threadCpu = pool.cpu();
  const main = threadCpuMicros() - mainCpuStart;
  const threadsEnd = cpuByThreadName();
  const helperMicros = (name: string) => Math.max(0, (threadsEnd[name] ?? 0) - (threadsStart[name] ?? 0)) * 1000;
  const v8Helpers = helperMicros('V8Worker');
  const fileSystem = helperMicros('libuv-worker');
  const cpu: CpuBudget = {
    render: threadCpu.total - threadCpu.bundle - threadCpu.brotli - threadCpu.gzip,
    brotli: threadCpu.brotli,
    gzip: threadCpu.gzip,
    bundle: threadCpu.bundle,
    main: main - searchText,
    searchText,
    v8Helpers,
    fileSystem,
    other: Math.max(0, processCpuMicros() - processCpuStart - main - threadCpu.total - v8Helpers - fileSystem),
  };
  return { counts, textChanged, reached, cpu };
}

/**
 * A new bundle that draws every page as the old one did (the render fingerprint is the same: the change
 * was to the API, the admin, a script): only the bundle and the fixed pages are built, their static files
 * join the served folder and the server bundle is swapped in. No page is drawn again, the search index
 * stays. Answers the summary lines. `npm start` after a deploy takes the same step with a new render
 * fingerprint (`render`, recorded in the build info), and its server then draws every page again.
 */
export async function swapBundle(
  outDir: string,
  dataDir: string,
  data: Pick<DataSnapshot, 'id' | 'version'>,
  render?: string,
): Promise<string[]> {
  const stagingDir = `${outDir}.staging-${process.pid}`;
  const stamp = sourceStamp(root);
  fs.rmSync(stagingDir, { recursive: true, force: true });
  try {
    say('building the new bundle and the fixed pages into a staging folder (PRERENDER_DATA_PAGES=false)');
    const started = performance.now();
    const progress = createProgress('[rebuild]', 'pages');
    const files = await runAstroBuild(stagingDir, dataDir, 0, progress, { PRERENDER_DATA_PAGES: 'false' });
    progress.stop();
    const copied = await copyStaticFiles(path.join(stagingDir, 'client'), path.join(outDir, 'client'));
    swapIn(outDir, stagingDir, ['server']);
    writeBuildInfo(outDir, { sourceStamp: stamp, storeId: data.id, storeVersion: data.version, ...(render ? { render } : {}) });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    return [
      `  new bundle          ${files} fixed files (astro build and swap ${seconds} s), ${copied} static file(s) changed, no page drawn again`,
    ];
  } finally {
    fs.rmSync(stagingDir, { recursive: true, force: true });
  }
}

/** `--all`: see the module comment. Answers the summary lines. */
export async function renderAllBuild(
  outDir: string,
  dataDir: string,
  data: DataSnapshot,
  build: string,
  render: string,
): Promise<string[]> {
  const stagingDir = `${outDir}.staging-${process.pid}`;
  const clientDir = path.join(outDir, 'client');
  const stamp = sourceStamp(root);
  const threads = getConfig().RENDER_THREADS ?? os.availableParallelism();
  fs.rmSync(stagingDir, { recursive: true, force: true });
  try {
    // Inputs before any page is rendered: a write meanwhile leaves them older than the page, so the
    // next incremental rebuild renders that page again (never the reverse).
    const inputs = await computePageInputs(data.store);
    // What the served pages and search index were made with (the search index is trusted where no page text changed).
    const previous = readRenderState(renderStateFileFor(clientDir));
    const { paths, marks } = await planPublicPaths(data.store);
    const searchPeriods = await listSearchBundles(data.store, searchDay());
    const shared = data.store.pages.shared;
    if (shared) say(SHARED_FULL_BUILD);

    say('building the bundle and the fixed pages into a staging folder (PRERENDER_DATA_PAGES=false)');
    const buildStarted = performance.now();
    const progress = createProgress('[rebuild]', 'pages');
    const files = await runAstroBuild(stagingDir, dataDir, 0, progress, { PRERENDER_DATA_PAGES: 'false' });
    const buildMs = performance.now() - buildStarted;
    const copied = await copyStaticFiles(path.join(stagingDir, 'client'), clientDir);

    say(`rendering ${paths.length} pages on ${threads} render thread(s) with the new build, newest first`);
    const renderStarted = performance.now();
    const { counts, textChanged, reached, cpu } = await renderEveryPath(
      paths,
      marks,
      path.join(stagingDir, 'server/entry.mjs'),
      clientDir,
      threads,
      progress,
    );
    const renderMs = performance.now() - renderStarted;
    let removed = 0;
    for (const stale of listRenderedPaths(clientDir, new Set(paths))) {
      if ((await deleteServedFile(fileForPath(clientDir, stale), clientDir)) === 'deleted') removed++;
      if (stale.startsWith('/article/')) textChanged.add(stale);
    }

    // Only the bundles holding a page whose indexed part changed are indexed again (none when only, say,
    // the footer changed); all of them when Pagefind itself changed, or a page went (its bundle is not known).
    const indexer = searchIndexerVersion();
    const bundleOf = new Map([...searchPeriods].flatMap(([name, slugs]) => slugs.map((slug) => [articlePath(slug), name] as const)));
    const everything = previous?.indexer !== indexer || [...textChanged].some((p) => !bundleOf.has(p));
    const dirty = new Set([...textChanged].map((p) => bundleOf.get(p)!));
    say(
      everything
        ? `indexing the pages for search (Pagefind, ${searchPeriods.size} bundles)`
        : dirty.size
          ? `indexing for search the ${dirty.size} bundle(s) whose pages' text changed (Pagefind)`
          : 'no page text changed: search index kept',
    );
    const synced = await syncSearchBundles(clientDir, searchPeriods, everything ? 'all' : dirty);
    const search = { pages: synced.results.reduce((sum, r) => sum + r.pages, 0), ms: synced.ms };
    await closeSearchIndexer();

    swapIn(outDir, stagingDir, ['server']);
    writeBuildInfo(outDir, { sourceStamp: stamp, storeId: data.id, storeVersion: data.version, render });
    // The day tier the search index just recorded stays in the header; a server's drawnWith is older than this record.
    writeRenderStateFile(
      renderStateFileFor(clientDir),
      ({ drawnWith: _drawn, ...header }) => ({ ...header, rebuild: { build, storeId: data.id, render, indexer } }),
      pageStatesOf(clientDir, inputs),
    );
    // Every page is this build's now: what the server's worker journaled is moot.
    takeRenderJournal(clientDir).discard();
    const perSecond = paths.length / Math.max(renderMs / 1000, 0.001);
    say(`all: ${paths.length} pages rendered, ${search.pages} pages indexed (${elapsed()})`);
    return [
      `  files prerendered   ${files} fixed (astro build ${(buildMs / 1000).toFixed(1)} s), ${copied} static file(s) changed`,
      `  pages rendered      ${paths.length} on ${threads} thread(s) in ${(renderMs / 1000).toFixed(1)} s, ${perSecond.toFixed(0)} pages/s (${counts.written} written, ${counts.unchanged} unchanged)`,
      `  newest first        ${reached.map((mark) => `${mark.label}: ${mark.end} pages in ${(mark.ms / 1000).toFixed(1)} s`).join(', ')}`,
      cpuBudgetLine(cpu, paths.length),
      `  pages removed       ${removed}`,
      `  search index        ${search.pages} pages (${(search.ms / 1000).toFixed(1)} s) in ${synced.results.length} of ${searchPeriods.size} bundles`,
      ...(shared ? [`  other servers       NOT updated: ${SHARED_FULL_BUILD}`] : []),
    ];
  } finally {
    fs.rmSync(stagingDir, { recursive: true, force: true });
  }
}
