/**
 * `npm run rebuild` (CI and cron): publishes scheduled articles that came due, builds every page,
 * feed and sitemap into a staging folder, indexes it with Pagefind, swaps it in for OUT_DIR, and
 * records the render manifest. A running server keeps serving complete files throughout.
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { getConfig } from '../src/config.ts';
import { openStore } from '../src/store/index.ts';
import { lockHolder } from '../src/store/lowdb/lock.ts';
import { startRuntime, stopRuntime } from '../src/server/runtime.ts';
import { publishDueArticles } from '../src/server/articles.ts';
import { purgeExpiredTrash } from '../src/server/trash.ts';
import { listPublicPaths } from '../src/server/publishing/paths.ts';
import { buildSearchIndex } from '../src/server/publishing/search-index.ts';
import { manifestFileFor, writeRenderManifest } from '../src/server/publishing/manifest.ts';
import { outDirOf, sourceStamp } from './build-state.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const started = performance.now();
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
const say = (line: string) => console.log(`[rebuild] ${line}`);

class RebuildError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RebuildError';
  }
}

/** Publishes due articles (unless a server owns the data) and answers what the build will read. */
async function prepareData(dataDir: string): Promise<{ id: string; version: number; pages: number; serverPid: number | undefined }> {
  const serverPid = lockHolder(path.resolve(dataDir));
  if (serverPid) {
    say(`a server (pid ${serverPid}) holds ${dataDir}: it publishes due articles itself; building from a snapshot of the data`);
    const store = await openStore(dataDir, 'read');
    try {
      return { id: store.id, version: await store.articles.version(), pages: (await listPublicPaths(store)).length, serverPid };
    } finally {
      await store.close();
    }
  }
  const runtime = await startRuntime({ ...getConfig(), DATA_DIR: dataDir });
  try {
    const published = await publishDueArticles(runtime);
    say(published.length ? `published ${published.length} scheduled article(s): ${published.map((a) => a.slug).join(', ')}` : 'no scheduled articles are due');
    const purged = await purgeExpiredTrash(runtime);
    if (purged) say(`purged ${purged} article(s) trashed more than 30 days ago`);
    return { id: runtime.store.id, version: await runtime.store.articles.version(), pages: (await listPublicPaths(runtime.store)).length, serverPid };
  } finally {
    await stopRuntime();
  }
}

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

async function main(): Promise<void> {
  const config = getConfig();
  const outDir = outDirOf(root);
  const stagingDir = `${outDir}.staging-${process.pid}`;
  say(`data: ${path.resolve(config.DATA_DIR)}; output: ${outDir}`);

  const data = await prepareData(config.DATA_DIR);
  const stamp = sourceStamp(root);
  fs.rmSync(stagingDir, { recursive: true, force: true });
  try {
    say(`building about ${data.pages} data pages (articles, listings, feeds, sitemaps) into a staging folder`);
    const buildStarted = performance.now();
    const files = await runAstroBuild(stagingDir, config.DATA_DIR, data.pages);
    const buildMs = performance.now() - buildStarted;

    say('indexing the pages for search (Pagefind)');
    const search = await buildSearchIndex(path.join(stagingDir, 'client'));
    const kept = keepOldAssets(path.join(outDir, 'client'), path.join(stagingDir, 'client'));

    swapIn(outDir, stagingDir);
    fs.writeFileSync(path.join(outDir, '.build-info.json'), JSON.stringify({ sourceStamp: stamp, storeId: data.id, storeVersion: data.version }));
    writeRenderManifest(manifestFileFor(path.join(outDir, 'client')), { storeId: data.id, version: data.version, renderedAt: new Date().toISOString(), by: 'build', siteUrl: config.SITE_URL });

    say('done');
    console.log('');
    console.log(`  files prerendered   ${files} (astro build ${(buildMs / 1000).toFixed(1)} s)`);
    console.log(`  search index        ${search.pages} pages (${(search.ms / 1000).toFixed(1)} s)`);
    if (kept) console.log(`  previous assets     ${kept} kept for pages rendered by the running server`);
    console.log(`  data                store ${data.id}, article version ${data.version}`);
    console.log(`  total               ${elapsed()}`);
    if (data.serverPid) {
      console.log(`\n  The server (pid ${data.serverPid}) serves the new files now and brings any page edited during the build up to date.`);
      console.log('  Restart it if the code changed since it started.');
    }
  } finally {
    fs.rmSync(stagingDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  const err = error as Error;
  console.error(`\n[rebuild] FAILED after ${elapsed()}: ${err.message}`);
  if (err.cause) console.error(`  cause: ${(err.cause as Error).message ?? String(err.cause)}`);
  if (!(err instanceof RebuildError) && !err.cause) console.error(err.stack);
  console.error('[rebuild] The site that was being served is unchanged.');
  process.exit(1);
});
