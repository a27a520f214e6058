/** Builds the site once before API tests, unless the test runner already did (MERIDIAN_BUILT=1). */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './server.ts';

export default function setup(): void {
  if (process.env.MERIDIAN_BUILT === '1' && fs.existsSync(path.join(ROOT, process.env.OUT_DIR ?? 'dist', 'server/entry.mjs'))) return;
  // The build reads an empty store: API tests bring their own data and servers.
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-build-'));
  try {
    execFileSync(process.execPath, [path.join(ROOT, 'node_modules/astro/bin/astro.mjs'), 'build'], {
      cwd: ROOT,
      stdio: 'inherit',
      // NODE_ENV=production as in `npm run build`: vitest sets NODE_ENV=test, which would compile JSX for
      // React's dev runtime, and the server (run with NODE_ENV=production) would fail to render islands.
      env: { ...process.env, NODE_ENV: 'production', DATA_DIR: dataDir, SEED: 'none' },
    });
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
