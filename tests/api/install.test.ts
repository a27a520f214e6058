/**
 * A production install from scratch: a copy of the project without node_modules, `npm ci --omit=dev`
 * (no dev dependency, no patch step), `npm run rebuild` and `npm run serve` in production mode, all on the
 * Node 24 the install brings (the machine's own node only runs npm). About a minute with npm's cache.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { waitForListening } from '../../scripts/server-process.ts';
import { testingPostgres } from '../helpers/postgres.ts';
import { ROOT } from '../helpers/server.ts';

const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-install-'));
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-install-data-'));

afterAll(() => {
  fs.rmSync(copy, { recursive: true, force: true });
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** A server's environment: a PATH without this checkout's node_modules/.bin, none of the test run's settings. */
const env: NodeJS.ProcessEnv = {
  PATH: (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((entry) => !entry.includes('node_modules'))
    .join(path.delimiter),
  HOME: process.env.HOME,
  LANG: 'C.UTF-8',
};

async function npm(args: string[], extra: NodeJS.ProcessEnv = {}): Promise<{ status: number | null; output: string }> {
  const child = spawn('npm', args, { cwd: copy, env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [status] = (await once(child, 'close')) as [number | null];
  return { status, output };
}

/** Resolves once no process of the group is left; SIGKILL if it outlives `ms`. */
async function groupGone(group: number, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      process.kill(-group, Date.now() < deadline ? 0 : 'SIGKILL');
    } catch {
      return; // ESRCH: the group is empty
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// The same whatever TEST_STORE says (it picks its stores itself): run once, in the lowdb pass of `npm test`.
describe.skipIf(testingPostgres())('npm ci --omit=dev && npm run rebuild && npm run serve', () => {
  it('installs only the production dependencies, with Node 24 among them', { timeout: 300_000 }, async () => {
    // The checkout's files as they are now (committed or not), nothing it ignores.
    const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
      .split('\0')
      .filter((file) => file && fs.existsSync(path.join(ROOT, file)));
    for (const file of files) fs.cpSync(path.join(ROOT, file), path.join(copy, file), { recursive: true });
    const install = await npm(['ci', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline']);
    expect(install.status, install.output).toBe(0);
    expect(execFileSync(path.join(copy, 'node_modules/.bin/node'), ['--version'], { encoding: 'utf8' })).toMatch(/^v24\./);
    for (const devOnly of ['vitest', 'patch-package', '@playwright/test', 'eslint'])
      expect(fs.existsSync(path.join(copy, 'node_modules', devOnly)), devOnly).toBe(false);
  });

  it('builds, and serves in production mode: no demo content, nothing to fix first', { timeout: 120_000 }, async () => {
    const site = { SITE_URL: 'https://news.example', DATA_DIR: dataDir };
    const build = await npm(['run', 'rebuild'], site);
    expect(build.status, build.output.slice(-3000)).toBe(0);
    // Its own process group: npm, its shell and the server stop together.
    const server = spawn('npm', ['run', 'serve'], {
      cwd: copy,
      env: { ...env, ...site, HOST: '127.0.0.1', PORT: '0', NODE_ENV: 'production' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    try {
      const { url, output } = await waitForListening(server, 60_000);
      const health = await fetch(`${url}/api/health`);
      expect(health.status).toBe(200);
      const { count } = (await (await fetch(`${url}/api/articles/count`)).json()) as { count: number };
      expect(count).toBe(0);
      expect(output()).toContain('No admin account yet');
      expect(output()).not.toMatch(/Seeded demo content|password:/i);
    } finally {
      process.kill(-server.pid!, 'SIGTERM');
      await once(server, 'exit');
      // npm leaves before the server it started has finished its clean stop (a last flush into the copy):
      // wait for the whole group, or the folder's removal races its last writes.
      await groupGone(server.pid!, 30_000);
    }
  });
});
