/**
 * The suite's one production build (OUT_DIR, .out/test under `npm test`): made from an empty store and
 * made again only when the sources changed, as `npm start` decides. vitest's and Playwright's global setup.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { builtFromCurrentSources, outDirOf, readBuildInfo, runBuild } from '../../scripts/build-state.ts';
import { renderFingerprint } from '../../scripts/render-fingerprint.ts';
import { ROOT, TEST_SITE_URL } from './server.ts';

/** Builds OUT_DIR unless its build is from the present sources; answers whether it built. */
export function ensureTestBuild(): boolean {
  const info = readBuildInfo(ROOT);
  if (info && fs.existsSync(path.join(outDirOf(ROOT), 'server/entry.mjs')) && builtFromCurrentSources(ROOT, info)) return false;
  // Tests bring their own data: the build's pages are the fixed ones, and its store is no test's.
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-build-'));
  try {
    const env = { ...process.env, DATA_DIR: dataDir, SEED: 'none', SITE_URL: TEST_SITE_URL };
    runBuild(ROOT, env, { id: 'test-build', version: 0 }, renderFingerprint(ROOT, env));
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return true;
}

export default function setup(): void {
  ensureTestBuild();
}

// `node tests/helpers/global-setup.ts`: `npm test` builds once before vitest and Playwright start.
if (import.meta.main) console.log(ensureTestBuild() ? 'built' : 'the build is current');
