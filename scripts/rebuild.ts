/**
 * `npm run rebuild` (CI and cron): publishes scheduled articles that came due, then either renders
 * only the pages whose inputs changed since the last rebuild (the default, when the code is the same)
 * through the built render twins into the served folder, or (`--full`, or when the code changed)
 * builds everything into a staging folder, indexes it with Pagefind and swaps it in for OUT_DIR.
 * A running server keeps serving complete files throughout: every file is replaced by a rename.
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { getConfig, OutDirError } from '../src/config.ts';
import type { Store } from '../src/store/types.ts';
import { storeWriterPid } from '../src/store/index.ts';
import { startRuntime, stopRuntime } from '../src/server/app.ts';
import { useReadStore } from '../src/server/runtime.ts';
import { publishDueArticles } from '../src/server/articles.ts';
import { fileForPath, listPublicPaths, listRenderedPaths, listSearchBundles } from '../src/server/publishing/paths.ts';
import {
  buildSearchIndex,
  closeSearchIndexer,
  searchJobOf,
  searchJobPath,
  syncSearchBundles,
} from '../src/server/publishing/search-index.ts';
import { searchDay } from '../src/server/clock.ts';
import { purgeExpiredTrash } from '../src/server/trash.ts';
import { manifestFileFor, readRenderManifest, writeRenderManifest } from '../src/server/publishing/manifest.ts';
import {
  computePageInputs,
  planRender,
  readRenderState,
  renderStateFileFor,
  statOf,
  writeRenderState,
  type PageInput,
  type RenderState,
} from '../src/server/publishing/render-inputs.ts';
import { createSiteRenderer } from '../src/server/publishing/service.ts';
import { startRenderThread } from '../src/server/publishing/render-thread.ts';
import { takeRenderJournal } from '../src/server/publishing/render-journal.ts';
import { deleteServedFile, writeFileAtomic, type FileOutcome } from '../src/server/publishing/files.ts';
import { buildFingerprint, outDirOf, sourceStamp } from './build-state.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
const say = (line: string) => console.log(`[rebuild] ${line}`);

/** Where the time went: each phase from the end of the one before (the first from Node's start, so loading the modules counts). */
const phases: Array<[name: string, ms: number]> = [];
let phaseStart = 0;
function phase(name: string): void {
  const now = performance.now();
  phases.push([name, now - phaseStart]);
  phaseStart = now;
}

class RebuildError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RebuildError';
  }
}

/** The data a rebuild reads: its store (the write runtime's, or a read snapshot beside a running server) until released. */
type DataSnapshot = { id: string; version: number; serverPid: number | undefined; store: Store; release: () => Promise<void> };

/**
 * Several servers on one database (`store.pages.shared`): the rebuild takes each page it renders or
 * removes as a job of the shared queue, as a server's worker does. It claims the job (a server
 * holding it renders the page itself), stores the bytes or the removal and announces them, so
 * every server copies them into its own folder, then completes the job; a write that lands
 * meanwhile re-queues it, and a server renders it again with a later sequence, so the rebuild
 * never puts older bytes over a server's newer ones.
 */
type SharedQueue = {
  /** Takes the job of `publicPath`; false when a server holds it (that server renders, stores and announces the page). */
  claim(publicPath: string): Promise<boolean>;
  /** Stores the page's bytes (undefined: removed) for the other servers unless its file was unchanged, and gives the job up. */
  done(publicPath: string, outcome: FileOutcome, body: Uint8Array | undefined): Promise<void>;
  /** Tells every server to re-index a search bundle in its own folder (the rebuild re-indexed it in OUT_DIR). */
  reindexed(bundle: string): Promise<void>;
  counts: { stored: number; leftToServers: number };
};

async function openSharedQueue(store: Store, paths: readonly string[], leaseMs: number): Promise<SharedQueue> {
  const owner = `rebuild-${randomUUID()}`;
  // Queued (and so started) one millisecond before now: a write after this re-queues the job.
  const startedAt = new Date(Date.now() - 1).toISOString();
  await store.jobs.enqueue(paths, startedAt);
  const wanted = new Set(paths);
  const jobs = new Map<string, string>();
  for (const job of await store.jobs.list(await store.jobs.size())) if (wanted.has(job.path)) jobs.set(job.path, job.id);
  const counts = { stored: 0, leftToServers: 0 };
  return {
    counts,
    async claim(publicPath) {
      const id = jobs.get(publicPath);
      const held = id !== undefined && (await store.jobs.claim(id, owner, Date.now() + leaseMs, Date.now()));
      if (!held) counts.leftToServers++;
      return held;
    },
    async done(publicPath, outcome, body) {
      // As the worker: a removal is stored even when this folder had no file (the servers' folders may).
      if (outcome !== 'unchanged') {
        await store.pages.put(publicPath, outcome === 'written' ? body : undefined, owner);
        counts.stored++;
      }
      await store.jobs.complete(jobs.get(publicPath)!, startedAt);
    },
    async reindexed(bundle) {
      await store.pages.put(searchJobPath(bundle), undefined, owner);
    },
  };
}

/** Publishes due articles (unless a server owns the data) and keeps the store open for what follows. */
async function prepareData(dataDir: string): Promise<DataSnapshot> {
  const serverPid = storeWriterPid(path.resolve(dataDir));
  if (serverPid) {
    say(`a server (pid ${serverPid}) holds ${dataDir}: it publishes due articles itself; building from a snapshot of the data`);
    // The render twins read the same snapshot (useReadStore keeps it for this process).
    const store = await useReadStore();
    return { id: store.id, version: await store.articles.version(), serverPid, store, release: () => store.close() };
  }
  // Nothing here searches: the text index (a worker reading every article file) is left unbuilt.
  const runtime = await startRuntime({ ...getConfig(), DATA_DIR: dataDir }, { lazyTextIndex: true });
  try {
    const published = await publishDueArticles(runtime);
    say(
      published.length
        ? `published ${published.length} scheduled article(s): ${published.map((a) => a.slug).join(', ')}`
        : 'no scheduled articles are due',
    );
    const purged = await purgeExpiredTrash(runtime);
    if (purged) say(`purged ${purged} article(s) trashed more than 30 days ago`);
    const { store } = runtime;
    return { id: store.id, version: await store.articles.version(), serverPid, store, release: () => stopRuntime() };
  } catch (error) {
    await stopRuntime();
    throw error;
  }
}

/**
 * Why a full build does not reach the other servers: it is new code (or a first build) swapped in
 * whole, and a server keeps rendering with the bundle it started with, so it needs the new folder
 * and a restart, not pages copied one by one into its old one.
 */
const SHARED_FULL_BUILD =
  "several servers share this database, and a full build replaces OUT_DIR only: copy OUT_DIR/client into each server's SERVE_DIR and restart it (docs/postgresql.md: Several servers on one database)";

/** Why an incremental rebuild beside a server on its DATA_DIR cannot hand its pages to the other servers. */
const SHARED_READ_ONLY =
  'a server holds this DATA_DIR, so the database is open read-only and the pages reach OUT_DIR only: give the rebuild a DATA_DIR of its own to hand them to every server';

/** Runs `astro build` into `stagingDir`, printing pages done / expected as it goes. */
function runAstroBuild(stagingDir: string, dataDir: string, expected: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'node_modules/astro/bin/astro.mjs'), 'build'], {
      cwd: root,
      // A development NODE_ENV (vitest sets "test") would bundle React's dev JSX runtime into the server build.
      env: { ...process.env, NODE_ENV: 'production', OUT_DIR: stagingDir, DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let done = 0;
    let lastPrint = 0;
    const tail: string[] = [];
    let buffered = '';
    const onLine = (line: string) => {
      tail.push(line);
      if (tail.length > 60) tail.shift();
      // Astro prints one "├─ /path (+Nms)" line per prerendered file.
      if (/[├└]─ \//.test(line)) {
        done++;
        const now = performance.now();
        if (now - lastPrint > 1000) {
          lastPrint = now;
          say(`pages ${done}/${Math.max(done, expected)} (${elapsed()})`);
        }
      } else if (/error|warn/i.test(line)) {
        console.log(line);
      }
    };
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) onLine(line);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('error', (error) => reject(new RebuildError('could not start astro build', { cause: error })));
    child.once('exit', (code) => {
      if (buffered) onLine(buffered);
      if (code === 0) {
        say(`pages ${done}/${done} (${elapsed()})`);
        resolve(done);
      } else {
        console.error(tail.join('\n'));
        reject(new RebuildError(`astro build exited with code ${code} (last lines above)`));
      }
    });
  });
}

/** Keeps hashed assets of the current build, so pages a running server renders with its old bundle still find them. */
function keepOldAssets(currentClient: string, stagingClient: string): number {
  const from = path.join(currentClient, '_astro');
  const to = path.join(stagingClient, '_astro');
  if (!fs.existsSync(from)) return 0;
  fs.mkdirSync(to, { recursive: true });
  let kept = 0;
  for (const name of fs.readdirSync(from)) {
    if (fs.existsSync(path.join(to, name))) continue;
    fs.copyFileSync(path.join(from, name), path.join(to, name));
    kept++;
  }
  return kept;
}

/** Replaces OUT_DIR/{client,server} with the staged ones: one rename each, the old folder removed after. */
function swapIn(outDir: string, stagingDir: string): void {
  fs.mkdirSync(outDir, { recursive: true });
  const trash: string[] = [];
  for (const name of ['server', 'client']) {
    const target = path.join(outDir, name);
    const old = path.join(outDir, `.old-${name}-${process.pid}`);
    if (fs.existsSync(target)) {
      fs.renameSync(target, old);
      trash.push(old);
    }
    fs.renameSync(path.join(stagingDir, name), target);
  }
  for (const dir of trash) fs.rmSync(dir, { recursive: true, force: true });
}

/** The page states of a finished render: what each file was rendered from and how it looks on disk. */
function stateOf(
  clientDir: string,
  inputs: ReadonlyMap<string, PageInput>,
  keep: RenderState['pages'] = {},
  rendered: ReadonlySet<string> | undefined = undefined,
): RenderState['pages'] {
  const pages: RenderState['pages'] = {};
  for (const [publicPath, input] of inputs) {
    if (rendered && !rendered.has(publicPath) && keep[publicPath]) {
      pages[publicPath] = keep[publicPath];
      continue;
    }
    const stat = statOf(clientDir, publicPath);
    if (stat) pages[publicPath] = { i: input.i, ...stat, ...(input.p ? { p: input.p } : {}) };
  }
  return pages;
}

/** The whole site into a staging folder, swapped in whole (today's clean build). */
async function fullBuild(outDir: string, dataDir: string, data: DataSnapshot, build: string): Promise<string[]> {
  const stagingDir = `${outDir}.staging-${process.pid}`;
  const stamp = sourceStamp(root);
  fs.rmSync(stagingDir, { recursive: true, force: true });
  try {
    // Inputs are taken before the build reads the data: a write during the build leaves them older
    // than the pages, so the next incremental rebuild renders those pages again (never the reverse).
    const inputs = await computePageInputs(data.store);
    const pages = (await listPublicPaths(data.store)).length;
    const searchPeriods = await listSearchBundles(data.store, searchDay());
    const shared = data.store.pages.shared;
    if (shared) say(SHARED_FULL_BUILD);
    // The build is a process of its own reading a snapshot; this one's store is not needed meanwhile.
    await data.release();
    say(`building about ${pages} data pages (articles, listings, feeds, sitemaps) into a staging folder`);
    const buildStarted = performance.now();
    const files = await runAstroBuild(stagingDir, dataDir, pages);
    const buildMs = performance.now() - buildStarted;

    say(`indexing the pages for search (Pagefind, ${searchPeriods.size} bundles: today's head, this month so far, closed months)`);
    const search = await buildSearchIndex(path.join(stagingDir, 'client'), searchPeriods);
    await closeSearchIndexer();
    const kept = keepOldAssets(path.join(outDir, 'client'), path.join(stagingDir, 'client'));

    const clientDir = path.join(outDir, 'client');
    swapIn(outDir, stagingDir);
    fs.writeFileSync(
      path.join(outDir, '.build-info.json'),
      JSON.stringify({ sourceStamp: stamp, storeId: data.id, storeVersion: data.version }),
    );
    writeRenderState(renderStateFileFor(clientDir), { build, storeId: data.id, pages: stateOf(clientDir, inputs) });
    // Every page is the build's now: what the server's worker wrote into the old folder is moot.
    takeRenderJournal(clientDir).discard();
    const lines = [
      `  files prerendered   ${files} (astro build ${(buildMs / 1000).toFixed(1)} s)`,
      `  search index        ${search.pages} pages (${(search.ms / 1000).toFixed(1)} s) in ${searchPeriods.size} bundles`,
    ];
    // Indexing cost per bundle size (the bench reads these lines).
    for (const bundle of search.bundles)
      lines.push(`  search bundle       ${bundle.period}: ${bundle.pages} pages in ${(bundle.ms / 1000).toFixed(2)} s`);
    if (kept) lines.push(`  previous assets     ${kept} kept for pages rendered by the running server`);
    if (shared) lines.push(`  other servers       NOT updated: ${SHARED_FULL_BUILD}`);
    say(`full build: ${files} files, ${search.pages} pages indexed`);
    return lines;
  } finally {
    fs.rmSync(stagingDir, { recursive: true, force: true });
  }
}

/**
 * Renders the pages whose inputs changed through the built render twins (the worker's path), into
 * the served folder, one atomic rename each; removes the pages the data no longer has; re-indexes
 * the search bundles of the articles that changed (and builds the ones a new day asks for).
 *
 * `pendingSearch`: search jobs a stopped server left in the manifest (see RenderManifest). Those
 * naming a bundle of today's plan are re-indexed here; the rest (a compaction, a stale bundle name)
 * are answered as `searchJobsLeft`, for the manifest this rebuild writes, and run at the server's next start.
 */
async function incrementalBuild(
  outDir: string,
  data: DataSnapshot,
  state: RenderState,
  pendingSearch: readonly string[],
): Promise<{ lines: string[]; summary: string; searchJobsLeft: string[] }> {
  const clientDir = path.join(outDir, 'client');
  const serverEntry = path.join(outDir, 'server/entry.mjs');
  // Pages are loaded from this same store: the runtime's (registered for the process) or the snapshot.
  const { store } = data;
  const inputs = await computePageInputs(store);
  phase('inputs');
  const journal = takeRenderJournal(clientDir);
  const plan = planRender(inputs, state.pages, listRenderedPaths(clientDir, inputs), clientDir, journal.entries);
  phase('plan');
  say(
    `incremental: ${plan.render.length} of ${inputs.size} pages to render, ${plan.remove.length} to remove, ${plan.adopt.length} kept as the server rendered them (${elapsed()})`,
  );

  // Beside a server on this DATA_DIR the database is open read-only (no job can be claimed, no page stored).
  const readOnlyShared = store.pages.shared && data.serverPid !== undefined;
  if (readOnlyShared) say(SHARED_READ_ONLY);
  const shared =
    store.pages.shared && !readOnlyShared
      ? await openSharedQueue(store, [...plan.render, ...plan.remove], getConfig().JOB_LEASE_MS)
      : undefined;
  const counts: Record<FileOutcome, number> = { written: 0, unchanged: 0, deleted: 0, absent: 0 };
  const rendered = new Set<string>();
  const months = new Set<string>();
  const touch = (publicPath: string) => {
    if (!publicPath.startsWith('/article/')) return;
    const month = inputs.get(publicPath)?.p ?? state.pages[publicPath]?.p;
    if (month) months.add(month);
  };
  if (plan.render.length > 0) {
    // As in the server: every file drawn by a render thread from the data loaded here.
    const thread = startRenderThread(serverEntry);
    const render = createSiteRenderer(thread);
    let lastPrint = performance.now();
    try {
      for (const [n, publicPath] of plan.render.entries()) {
        // Left to the server that holds the job; not recorded as rendered, so the next rebuild looks again.
        if (shared && !(await shared.claim(publicPath))) continue;
        const outcome = await render(publicPath);
        const file = fileForPath(clientDir, publicPath);
        const result = outcome.kind === 'page' ? await writeFileAtomic(file, outcome.body) : await deleteServedFile(file, clientDir);
        await shared?.done(publicPath, result, outcome.kind === 'page' ? outcome.body : undefined);
        counts[result]++;
        rendered.add(publicPath);
        if (result !== 'unchanged') touch(publicPath);
        if (performance.now() - lastPrint > 1000) {
          lastPrint = performance.now();
          say(`pages ${n + 1}/${plan.render.length} (${elapsed()})`);
        }
      }
    } finally {
      await thread.close();
    }
  }
  for (const publicPath of plan.remove) {
    if (shared && !(await shared.claim(publicPath))) continue;
    const result = await deleteServedFile(fileForPath(clientDir, publicPath), clientDir);
    await shared?.done(publicPath, result, undefined);
    counts[result]++;
    touch(publicPath);
  }
  phase('render');

  const searchStarted = performance.now();
  // The server's tiers for today (so its output equals a --full build's): a changed article of a
  // closed month re-indexes that month; one of this month re-indexes this month so far and the head.
  const today = searchDay();
  const bundles = await listSearchBundles(store, today);
  const dirty = new Set<string>();
  for (const month of months) {
    if (month < today.slice(0, 7)) dirty.add(month);
    else for (const name of bundles.keys()) if (name.startsWith('head-') || name.startsWith(`${month}-`)) dirty.add(name);
  }
  const searchJobsLeft: string[] = [];
  for (const jobPath of pendingSearch) {
    const job = searchJobOf(jobPath);
    if (job?.kind === 'bundle' && bundles.has(job.bundle)) dirty.add(job.bundle);
    else if (job) searchJobsLeft.push(jobPath);
  }
  const { results: search } = await syncSearchBundles(clientDir, bundles, dirty);
  await closeSearchIndexer();
  // Search bundles are per server: each re-indexes its own folder, as after a search job another server ran.
  for (const result of search) await shared?.reindexed(result.period);
  const searchMs = performance.now() - searchStarted;
  phase('search');

  // Adopted pages get a state like rendered ones: today's input and the file's stat.
  const current = new Set([...rendered, ...plan.adopt]);
  writeRenderState(renderStateFileFor(clientDir), { ...state, pages: stateOf(clientDir, inputs, state.pages, current) });
  journal.discard();
  phase('state');
  const lines = [
    `  pages rendered      ${rendered.size} of ${inputs.size} (${counts.written} written, ${counts.unchanged} unchanged)`,
    `  pages kept          ${plan.adopt.length} as the server rendered them (render journal)`,
    `  pages removed       ${counts.deleted}`,
    ...(readOnlyShared ? [`  other servers       NOT updated: ${SHARED_READ_ONLY}`] : []),
    ...(shared
      ? [
          `  other servers       ${shared.counts.stored} page(s) and ${search.length} search bundle(s) stored and announced in the database; ${shared.counts.leftToServers} left to the server holding the job`,
        ]
      : []),
    `  search index        ${search.length} bundle(s) re-indexed, ${search.reduce((sum, r) => sum + r.pages, 0)} pages (${(searchMs / 1000).toFixed(1)} s)`,
  ];
  return {
    lines,
    summary: `incremental: ${rendered.size} of ${inputs.size} pages rendered (${counts.written} written), ${counts.deleted} removed, ${search.length} search bundle(s)`,
    searchJobsLeft,
  };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const unknown = args.filter((a) => a !== '--full');
  if (unknown.length) throw new RebuildError(`unknown argument ${unknown.join(' ')} (only --full is accepted)`);
  const config = getConfig();
  const outDir = outDirOf(root);
  say(`data: ${path.resolve(config.DATA_DIR)}; output: ${outDir}`);

  phase('start');
  const data = await prepareData(config.DATA_DIR);
  say(`data ready (${elapsed()})`);
  phase('data');
  const build = buildFingerprint(root);
  const state = readRenderState(renderStateFileFor(path.join(outDir, 'client')));
  phase('fingerprint');
  const fullBecause = args.includes('--full')
    ? '--full was given'
    : !fs.existsSync(path.join(outDir, 'server/entry.mjs'))
      ? 'there is no build yet'
      : !state
        ? 'there is no record of what the pages were rendered from'
        : state.build !== build
          ? 'the code, templates or site settings changed since the last build'
          : state.storeId !== data.id
            ? 'the pages were rendered from another data folder'
            : undefined;

  let lines: string[];
  let summary: string;
  // Search jobs a stopped server left for its next start: an incremental build runs those it can.
  const manifestFile = manifestFileFor(path.join(outDir, 'client'));
  const previous = readRenderManifest(manifestFile);
  let searchJobs = previous?.storeId === data.id ? (previous.searchJobs ?? []) : [];
  if (fullBecause) {
    say(`full build: ${fullBecause}`);
    lines = await fullBuild(outDir, config.DATA_DIR, data, build);
    summary = 'full build';
    // Every bundle was indexed.
    searchJobs = [];
  } else {
    try {
      ({ lines, summary, searchJobsLeft: searchJobs } = await incrementalBuild(outDir, data, state!, searchJobs));
    } finally {
      await data.release();
    }
    phase('close');
    lines.push(`  phases              ${phases.map(([name, ms]) => `${name} ${(ms / 1000).toFixed(2)}`).join(', ')} s`);
  }
  writeRenderManifest(manifestFile, {
    storeId: data.id,
    version: data.version,
    renderedAt: new Date().toISOString(),
    by: 'build',
    siteUrl: config.SITE_URL,
    ...(searchJobs.length ? { searchJobs } : {}),
  });

  console.log('');
  for (const line of lines) console.log(line);
  console.log(`  data                store ${data.id}, article version ${data.version}`);
  console.log(`  total               ${elapsed()}`);
  if (data.serverPid) {
    console.log(`\n  The server (pid ${data.serverPid}) serves the new files now and brings any page edited during the build up to date.`);
    if (fullBecause) console.log('  Restart it if the code changed since it started.');
  }
  console.log(`[rebuild] done: ${summary} in ${elapsed()}`);
}

main().then(
  // The read snapshot and Pagefind's process would otherwise keep the process alive.
  () => process.exit(0),
  (error: unknown) => {
    const err = error as Error;
    console.error(`\n[rebuild] FAILED after ${elapsed()}: ${err.message}`);
    if (err.cause) console.error(`  cause: ${(err.cause as Error).message ?? String(err.cause)}`);
    if (!(err instanceof RebuildError) && !(err instanceof OutDirError) && !err.cause) console.error(err.stack);
    // A full build swaps in whole; an incremental one replaces each file whole, so every served file is complete.
    console.error('[rebuild] Every served file is complete: the old site (or pages rendered before the failure).');
    process.exit(1);
  },
);
