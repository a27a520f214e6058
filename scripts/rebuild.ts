/**
 * `npm run rebuild` (CI and cron): publishes scheduled articles that came due, then brings the served
 * folder up to date the cheapest way that is exact:
 * - same code: renders only the pages whose inputs changed since the last rebuild through the publishing
 *   engine (`regenerator.ts`, as the server's worker does), and re-indexes the search bundles of the
 *   articles whose own text changed;
 * - new code that draws no page differently (the render fingerprint, `render-fingerprint.ts`, is the
 *   same: an API handler, the admin): builds and swaps in the new bundle only (`swapBundle`), then as above;
 * - new code that does (a template, a style, a static file, a site setting), or `--all`: builds the
 *   bundle and draws every page again with it in place, on all cores, re-indexing only the search
 *   bundles whose pages' text changed (`rebuild-all.ts`);
 * - no build, no render state, another data folder, or `--full`: builds everything into a staging
 *   folder, indexes it and swaps it in for OUT_DIR (`rebuild-full.ts`).
 * A running server keeps serving complete files throughout: every file is replaced by a rename.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { getConfig, OutDirError } from '../src/config.ts';
import { storeWriterPid } from '../src/store/index.ts';
import { startRuntime, stopRuntime } from '../src/server/app.ts';
import { useReadStore } from '../src/server/runtime.ts';
import { publishDueArticles } from '../src/server/articles.ts';
import { closeSearchIndexer } from '../src/server/publishing/search-indexer.ts';
import { purgeExpiredTrash } from '../src/server/trash.ts';
import { manifestFileFor, readRenderManifest, writeRenderManifest } from '../src/server/publishing/manifest.ts';
import { readRenderState, renderStateFileFor, writeRenderState, type RenderState } from '../src/server/publishing/render-inputs.ts';
import { createSiteRenderer } from '../src/server/publishing/service.ts';
import { startRenderThread } from '../src/server/publishing/render-thread.ts';
import { createRegenerator, type Renderer } from '../src/server/publishing/regenerator.ts';
import { openSharedQueue } from '../src/server/publishing/shared-rebuild.ts';
import { migrateRenderState } from '../src/server/publishing/render-state.ts';
import type { FileOutcome } from '../src/server/publishing/files.ts';
import { buildFingerprint, builtFromCurrentSources, outDirOf, readBuildInfo } from './build-state.ts';
import { createProgress } from './progress.ts';
import { elapsed, fullBuild, RebuildError, say, type DataSnapshot } from './rebuild-full.ts';
import { renderAllBuild, swapBundle } from './rebuild-all.ts';
import { renderFingerprint } from './render-fingerprint.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Where the time went: each phase from the end of the one before (the first from Node's start, so loading the modules counts). */
const phases: Array<[name: string, ms: number]> = [];
let phaseStart = 0;
function phase(name: string): void {
  const now = performance.now();
  phases.push([name, now - phaseStart]);
  phaseStart = now;
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

/** Why an incremental rebuild beside a server on its DATA_DIR cannot hand its pages to the other servers. */
const SHARED_READ_ONLY =
  'a server holds this DATA_DIR, so the database is open read-only and the pages reach OUT_DIR only: give the rebuild a DATA_DIR of its own to hand them to every server';

/** The renderer the server's worker uses, from the built bundle: every file drawn by a render thread from data loaded here. */
function startRenderer(outDir: string): { render: Renderer; close: () => Promise<void> } {
  const thread = startRenderThread(path.join(outDir, 'server/entry.mjs'), { eager: true });
  return { render: createSiteRenderer(thread), close: () => thread.close() };
}

/**
 * Renders the pages whose inputs changed into the served folder, one atomic rename each; removes the
 * pages the data no longer has; re-indexes the search bundles of the articles that changed (and builds
 * the ones a new day asks for).
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
  // Pages are loaded from this same store: the runtime's (registered for the process) or the snapshot.
  const { store } = data;
  // Every rebuild draws the feeds: the thread loads the bundle (about a second) while the plan is made.
  const renderer = startRenderer(outDir);
  const regenerator = createRegenerator({ clientDir, render: renderer.render });
  let plan: Awaited<ReturnType<typeof regenerator.planChanged>>;
  try {
    plan = await regenerator.planChanged(store, state);
  } catch (error) {
    await renderer.close();
    throw error;
  }
  phase('plan');
  say(
    `incremental: ${plan.render.length} of ${plan.inputs.size} pages to render, ${plan.remove.length} to remove, ${plan.adopt.length} kept as the server rendered them (${elapsed()})`,
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
  const changedArticles = new Set<string>();
  const touch = (publicPath: string) => {
    if (!publicPath.startsWith('/article/')) return;
    const input = plan.inputs.get(publicPath);
    const before = state.pages[publicPath];
    // Only an article's own record is indexed: a page drawn again for its related reading keeps its bundle.
    if (input?.t !== undefined && input.t === before?.t && input.p === before.p) return;
    // Both months when its date moved to another: the old bundle must drop it.
    for (const month of [input?.p, before?.p]) if (month) months.add(month);
    const slug = decodeURIComponent(publicPath.slice('/article/'.length));
    if (!slug.includes('/')) changedArticles.add(slug);
  };
  const progress = createProgress('[rebuild]', 'pages');
  try {
    for (const [n, publicPath] of plan.render.entries()) {
      progress.update('render', n, plan.render.length);
      // Left to the server that holds the job; not recorded as rendered, so the next rebuild looks again.
      if (shared && !(await shared.claim(publicPath))) continue;
      const { outcome, body } = await regenerator.regenerate(publicPath);
      await shared?.done(publicPath, outcome, body);
      counts[outcome]++;
      rendered.add(publicPath);
      if (outcome !== 'unchanged') touch(publicPath);
    }
    if (plan.render.length) progress.update('render', plan.render.length, plan.render.length);
  } finally {
    progress.stop();
    await renderer.close();
  }
  for (const publicPath of plan.remove) {
    if (shared && !(await shared.claim(publicPath))) continue;
    const outcome = await regenerator.remove(publicPath);
    await shared?.done(publicPath, outcome, undefined);
    counts[outcome]++;
    touch(publicPath);
  }
  phase('render');

  const searchStarted = performance.now();
  // The server's tiers for today (so its output equals a --full build's).
  const { results: search, left: searchJobsLeft } = await regenerator.reindexChanged(store, months, pendingSearch, changedArticles);
  await closeSearchIndexer();
  // Search bundles are per server: each re-indexes its own folder, as after a search job another server ran.
  for (const result of search) await shared?.reindexed(result.period);
  const searchMs = performance.now() - searchStarted;
  phase('search');

  // Adopted pages get a state like rendered ones: today's input and the file's stat.
  const current = new Set([...rendered, ...plan.adopt]);
  writeRenderState(renderStateFileFor(clientDir), { ...state, pages: regenerator.stateOf(plan.inputs, state.pages, current) });
  plan.discardJournal();
  phase('state');
  const lines = [
    `  pages rendered      ${rendered.size} of ${plan.inputs.size} (${counts.written} written, ${counts.unchanged} unchanged)`,
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
    summary: `incremental: ${rendered.size} of ${plan.inputs.size} pages rendered (${counts.written} written), ${counts.deleted} removed, ${search.length} search bundle(s)`,
    searchJobsLeft,
  };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const unknown = args.filter((a) => a !== '--full' && a !== '--all');
  if (unknown.length) throw new RebuildError(`unknown argument ${unknown.join(' ')} (only --full and --all are accepted)`);
  if (args.includes('--full') && args.includes('--all')) throw new RebuildError('--full and --all exclude each other');
  const config = getConfig();
  const outDir = outDirOf(root);
  say(`data: ${path.resolve(config.DATA_DIR)}; output: ${outDir}`);

  phase('start');
  const data = await prepareData(config.DATA_DIR);
  say(`data ready (${elapsed()})`);
  phase('data');
  const build = buildFingerprint(root);
  // Read only where a build is made: an incremental run on the same code does not need it.
  let render: string | undefined;
  const renderOf = () => (render ??= renderFingerprint(root));
  if (migrateRenderState(path.join(outDir, 'client'))) say('moved the render manifest and page records into render-state.json');
  const state = readRenderState(renderStateFileFor(path.join(outDir, 'client')));
  phase('fingerprint');
  const fullBecause = args.includes('--full')
    ? '--full was given'
    : !fs.existsSync(path.join(outDir, 'server/entry.mjs'))
      ? 'there is no build yet'
      : !state
        ? 'there is no record of what the pages were rendered from'
        : state.storeId !== data.id
          ? 'the pages were rendered from another data folder'
          : undefined;
  // A new build: every page drawn again in place when what the pages are drawn with changed, else only the bundle swapped.
  const newBuild = !fullBecause && state!.build !== build;
  const allBecause = args.includes('--all')
    ? '--all was given'
    : newBuild && state!.render !== renderOf()
      ? 'the templates, styles, static files or site settings changed since the last build'
      : undefined;

  let lines: string[];
  let summary: string;
  // Search jobs a stopped server left for its next start: an incremental build runs those it can.
  const manifestFile = manifestFileFor(path.join(outDir, 'client'));
  const previous = readRenderManifest(manifestFile);
  let searchJobs = previous?.storeId === data.id ? (previous.searchJobs ?? []) : [];
  if (allBecause) {
    say(`every page rendered again with a new build: ${allBecause}`);
    try {
      lines = await renderAllBuild(outDir, config.DATA_DIR, data, build, renderOf());
    } finally {
      await data.release();
    }
    summary = 'all pages rendered again';
    // Every bundle the pages' text asked for was indexed.
    searchJobs = [];
  } else if (fullBecause) {
    say(`full build: ${fullBecause}`);
    lines = await fullBuild(outDir, config.DATA_DIR, data, build, renderOf());
    summary = 'full build';
    // Every bundle was indexed.
    searchJobs = [];
  } else {
    const bundle: string[] = [];
    try {
      if (newBuild) {
        // `npm start` after the deploy swapped this bundle in already, and its server drew the pages with it.
        const built = readBuildInfo(root);
        if (built?.render === renderOf() && builtFromCurrentSources(root, built)) {
          say('new bundle: already in place (npm start swapped it in and its server drew every page with it)');
        } else {
          say('new bundle: the code changed, but nothing the pages show (same render fingerprint): no page is drawn again for it');
          bundle.push(...(await swapBundle(outDir, config.DATA_DIR, data, renderOf())));
        }
        state!.build = build;
      }
      ({ lines, summary, searchJobsLeft: searchJobs } = await incrementalBuild(outDir, data, state!, searchJobs));
      lines.unshift(...bundle);
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
    if (fullBecause || allBecause || newBuild) console.log('  Restart it if the code changed since it started.');
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
