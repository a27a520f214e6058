/**
 * OUT_DIR must lie inside the project (the server bundle finds its packages from its own folder
 * upwards): a folder elsewhere is refused before anything is opened or built, with the rule named.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildOutDir, OutDirError } from '../../src/config.ts';
import { ROOT } from '../helpers/server.ts';

describe('OUT_DIR', () => {
  it('resolves a folder inside the project and refuses one outside it or the project itself', () => {
    expect(buildOutDir(ROOT, 'dist')).toBe(path.join(ROOT, 'dist'));
    expect(buildOutDir(ROOT, path.join(ROOT, '.out', 'site'))).toBe(path.join(ROOT, '.out', 'site'));
    expect(buildOutDir(ROOT, '..dist')).toBe(path.join(ROOT, '..dist'));
    for (const outside of [os.tmpdir(), '../elsewhere', path.dirname(ROOT), '.', ROOT]) {
      expect(() => buildOutDir(ROOT, outside)).toThrow(OutDirError);
    }
    expect(() => buildOutDir(ROOT, '/srv/site')).toThrow(/must be a folder inside the project .*node_modules/);
  });

  it('npm run rebuild, npm run serve and npm start refuse it with the rule, before touching the data', () => {
    const outDir = path.join(os.tmpdir(), 'meridian-out-dir-outside');
    const dataDir = path.join(os.tmpdir(), 'meridian-out-dir-data-never-created');
    for (const [script, code] of [
      ['rebuild.ts', 1],
      ['serve.ts', 2],
      ['start.ts', 2],
    ] as const) {
      const run = spawnSync(process.execPath, [path.join(ROOT, 'scripts', script)], {
        cwd: ROOT,
        env: { ...process.env, OUT_DIR: outDir, DATA_DIR: dataDir, SEED: 'none', DATABASE_URL: '', SITE_URL: 'http://localhost:4321' },
        encoding: 'utf8',
      });
      expect(run.status, `${script}: ${run.stderr}`).toBe(code);
      expect(run.stderr).toContain(`OUT_DIR=${outDir} must be a folder inside the project`);
      expect(run.stderr).not.toMatch(/^\s+at /m);
    }
    expect(fs.existsSync(dataDir)).toBe(false);
  });
});
