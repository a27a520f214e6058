/**
 * `npm run rebuild --full` (and a rebuild whose code changed): the whole site built by `astro build`
 * into a staging folder, indexed with Pagefind and swapped in for OUT_DIR, one rename per folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Store } from '../src/store/types.ts';
import { listPublicPaths, listSearchBundles } from '../src/server/publishing/paths.ts';
import { buildSearchIndex, closeSearchIndexer, searchIndexerVersion } from '../src/server/publishing/search-indexer.ts';
import { searchDay } from '../src/server/clock.ts';
import { computePageInputs } from '../src/server/publishing/render-inputs.ts';
import { readRenderStateHeader, renderStateFileFor, writeRenderStateFile } from '../src/server/publishing/render-state.ts';
import { takeRenderJournal } from '../src/server/publishing/render-journal.ts';
import { pageStatesOf } from '../src/server/publishing/regenerator.ts';
import { sourceStamp, writeBuildInfo } from './build-state.ts';
import { createProgress, type ProgressReporter } from './progress.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const started = performance.now();
export const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
export const say = (line: string) => console.log(`[rebuild] ${line}`);

export class RebuildError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RebuildError';
  }
}

/** The data a rebuild reads: its store (the write runtime's, or a read snapshot beside a running server) until released. */
export type DataSnapshot = { id: string; version: number; serverPid: number | undefined; store: Store; release: () => Promise<void> };

/**
 * Why a full build does not reach the other servers: it is new code (or a first build) swapped in
 * whole, and a server keeps rendering with the bundle it started with, so it needs the new folder
 * and a restart, not pages copied one by one into its old one.
 */
export const SHARED_FULL_BUILD =
  "several servers share this database, and a full build replaces OUT_DIR only: copy OUT_DIR/client into each server's SERVE_DIR and restart it (docs/postgresql.md: Several servers on one database)";

/** Runs `astro build` into `stagingDir` (with `env` on top of this process's), printing pages done / expected as it goes. */
export function runAstroBuild(
  stagingDir: string,
  dataDir: string,
  expected: number,
  progress: ProgressReporter,
  env: Record<string, string> = {},
): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'node_modules/astro/bin/astro.mjs'), 'build'], {
      cwd: root,
      // A development NODE_ENV (vitest sets "test") would bundle React's dev JSX runtime into the server build.
      env: { ...process.env, ...env, NODE_ENV: 'production', OUT_DIR: stagingDir, DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let done = 0;
    const tail: string[] = [];
    let buffered = '';
    const onLine = (line: string) => {
      tail.push(line);
      if (tail.length > 60) tail.shift();
      // Astro prints one "├─ /path (+Nms)" line per prerendered file.
      if (/[├└]─ \//.test(line)) {
        done++;
        progress.update('build', done, Math.max(done, expected));
      } else if (/error|warn/i.test(line)) {
        progress.stop();
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
      progress.stop();
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

/** Replaces OUT_DIR/{client,server} (or those of `names`) with the staged ones: one rename each, the old folder removed after. */
export function swapIn(outDir: string, stagingDir: string, names: readonly string[] = ['server', 'client']): void {
  fs.mkdirSync(outDir, { recursive: true });
  const trash: string[] = [];
  for (const name of names) {
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

/** The whole site into a staging folder, swapped in whole (today's clean build). */
export async function fullBuild(outDir: string, dataDir: string, data: DataSnapshot, build: string, render: string): Promise<string[]> {
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
    const files = await runAstroBuild(stagingDir, dataDir, pages, createProgress('[rebuild]', 'pages'));
    const buildMs = performance.now() - buildStarted;

    say(`indexing the pages for search (Pagefind, ${searchPeriods.size} bundles: today's head, this month so far, closed months)`);
    const search = await buildSearchIndex(path.join(stagingDir, 'client'), searchPeriods);
    await closeSearchIndexer();
    const kept = keepOldAssets(path.join(outDir, 'client'), path.join(stagingDir, 'client'));

    const clientDir = path.join(outDir, 'client');
    // The slugs the new search index was built with travel with it (the render state of the staging folder).
    const { dayTier } = readRenderStateHeader(renderStateFileFor(path.join(stagingDir, 'client')));
    swapIn(outDir, stagingDir);
    writeBuildInfo(outDir, { sourceStamp: stamp, storeId: data.id, storeVersion: data.version, render });
    // Every page is this build's: the rebuild's record says so (a server's drawnWith is older now).
    writeRenderStateFile(
      renderStateFileFor(clientDir),
      ({ dayTier: _old, drawnWith: _drawn, ...header }) => ({
        ...header,
        rebuild: { build, storeId: data.id, render, indexer: searchIndexerVersion() },
        ...(dayTier ? { dayTier } : {}),
      }),
      pageStatesOf(clientDir, inputs),
    );
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
