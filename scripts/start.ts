/**
 * `npm start`: prepares DATA_DIR (demo content, first admin), builds when needed, then serves. After a
 * deploy (the sources changed) on a folder that holds pages, only the bundle and the fixed pages are
 * built: the server starts on the old pages and its worker draws every page again with the new build
 * while it serves (issue 36). With no build yet, or a SERVE_DIR of its own after a deploy, it is a full
 * build first. A SERVE_DIR of its own on other data than the build's needs none: the server redraws it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { getConfig, OutDirError } from '../src/config.ts';
import { prepareDataDir } from '../src/server/boot.ts';
import { startRuntime, stopRuntime } from '../src/server/app.ts';
import { lockServedFolder, ServedFolderLockedError } from '../src/server/publishing/serve-lock.ts';
import {
  migrateRenderState,
  pagesDrawnWith,
  readRenderStateHeader,
  renderStateFileFor,
  updateRenderStateHeader,
} from '../src/server/publishing/render-state.ts';
import { needsBuild, outDirOf, readBuildInfo, runBuild, serveDirOf } from './build-state.ts';
import { swapBundle } from './rebuild-all.ts';
import { renderFingerprint } from './render-fingerprint.ts';
import { portTaken, portTakenMessage } from './server-process.ts';
import { createLog } from '../src/server/log.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const config = getConfig();
// The same logger settings as the server this becomes (serve.ts makes its own once imported).
const logging = createLog(config);
const { log } = logging;

// Before anything is opened: a build outside the project could not be served.
try {
  outDirOf(root);
} catch (error) {
  if (!(error instanceof OutDirError)) throw error;
  log.fatal(`Cannot start: ${error.message}`);
  process.exit(2);
}

// Before a build of minutes: a port someone else listens on would only fail once it is done.
if (await portTaken(config.HOST, config.PORT)) {
  log.fatal(portTakenMessage(config.HOST, config.PORT));
  process.exit(2);
}

// Before anything is built: a build would replace the folder another server is serving.
let releaseServed: () => void;
try {
  releaseServed = lockServedFolder(serveDirOf(root));
} catch (error) {
  if (!(error instanceof ServedFolderLockedError)) throw error;
  log.fatal(`Cannot start: ${error.message}`);
  process.exit(2);
}

const runtime = await startRuntime(config, { log: logging }).catch((error: Error) => {
  log.fatal(`Cannot start: ${error.message}`);
  process.exit(2);
});
await prepareDataDir(runtime);
const store = { id: runtime.store.id, version: await runtime.store.articles.version() };
await stopRuntime(runtime);

const clientDir = path.join(outDirOf(root), 'client');
const ownFolder = serveDirOf(root) !== clientDir;
const stale = needsBuild(root, store);
// Other data than the build's, with the build's code and site settings (its fixed pages are right), served from a folder of
// its own: the server redraws that folder from its data at start; a build would only rewrite OUT_DIR/client, not served here.
const redrawOnly = stale === 'data changed' && ownFolder && readBuildInfo(root)?.render === renderFingerprint(root);
const reason = redrawOnly ? undefined : stale;
if (redrawOnly) log.info(`The data changed since the build: the server draws the pages of ${serveDirOf(root)} again as it starts`);
const render = reason ? renderFingerprint(root) : undefined;
if (reason === 'sources changed' && !ownFolder && fs.existsSync(path.join(clientDir, 'index.html'))) {
  const stateFile = renderStateFileFor(clientDir);
  // A folder in the layout before render-state.json moves in first, or its manifest would be lost.
  migrateRenderState(clientDir);
  // Pages of a build that recorded nothing: named, so the server knows they are not the new build's.
  if (pagesDrawnWith(readRenderStateHeader(stateFile)) === undefined)
    updateRenderStateHeader(stateFile, (header) => ({ ...header, drawnWith: readBuildInfo(root)?.render ?? 'unrecorded' }));
  log.info(`Building the new bundle (${reason}); the server then draws every page again while it serves the old ones...`);
  await swapBundle(outDirOf(root), config.DATA_DIR, store, render);
} else if (reason) {
  // The build replaces OUT_DIR/client, which may be another server's folder even when SERVE_DIR is ours.
  let releaseBuilt: (() => void) | undefined;
  try {
    releaseBuilt = ownFolder ? lockServedFolder(clientDir) : undefined;
  } catch (error) {
    if (!(error instanceof ServedFolderLockedError)) throw error;
    log.fatal(`Cannot build: ${error.message}`);
    process.exit(2);
  }
  log.info(`Building the site (${reason})...`);
  runBuild(root, { ...process.env, DATA_DIR: config.DATA_DIR }, store, render);
  releaseBuilt?.();
  // astro build empties OUT_DIR first, lock files included: take the served folder's lock again.
  releaseServed();
  lockServedFolder(serveDirOf(root));
}
const { serveSite } = await import('./serve.ts');
await serveSite({ production: false, logging });
