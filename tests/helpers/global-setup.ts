/** Builds the site once before API tests, unless the test runner already did (MERIDIAN_BUILT=1). */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './server.ts';

export default function setup(): void {
  if (process.env.MERIDIAN_BUILT === '1' && fs.existsSync(path.join(ROOT, process.env.OUT_DIR ?? 'dist', 'server/entry.mjs'))) return;
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules/astro/bin/astro.mjs'), 'build'], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, DATA_DIR: fs.mkdtempSync(path.join(ROOT, '.data-build-')), SEED: 'none' },
  });
}
