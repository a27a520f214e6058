/**
 * Production mode (`npm run serve`, scripts/serve.ts run directly): an unsafe configuration is refused
 * with one sentence and exit code 2 before anything is opened, and nothing is seeded or made up unasked.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { parseProductionConfig } from '../../src/server/production.ts';
import { SERVER_NODE_FLAGS } from '../../scripts/server-process.ts';
import { storeEnvFor } from '../helpers/postgres.ts';
import { makeUnwritable } from '../helpers/read-only.ts';
import { ROOT, makeDataDir, siteCopyFor, startServer } from '../helpers/server.ts';
import { TestClient, read } from './support.ts';

const undo: (() => void)[] = [];
afterEach(() => {
  for (const restore of undo.splice(0).reverse()) restore();
});

/** `npm run serve` with `env` over a production-like one, run to its end (a start that is not refused times out). */
function runServe(env: Record<string, string>) {
  return spawnSync(process.execPath, [...SERVER_NODE_FLAGS, path.join(ROOT, 'scripts/serve.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: '0',
      SITE_URL: 'https://news.example',
      SEED: '',
      ADMIN_PASSWORD: '',
      DATABASE_URL: '',
      ...env,
    },
    encoding: 'utf8',
    timeout: 20_000,
  });
}

/** Exit code 2 and exactly one line on stderr, naming `what`. */
function expectRefusal(run: ReturnType<typeof runServe>, what: string): void {
  expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(2);
  const lines = run.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^Cannot start: /);
  expect(lines[0]).toContain(what);
}

describe('production configuration', () => {
  it('seeds demo content only when SEED=demo is explicit; npm start keeps demo as its default', () => {
    expect(parseProductionConfig({}).SEED).toBe('none');
    expect(parseProductionConfig({ SEED: '' }).SEED).toBe('none');
    expect(parseProductionConfig({ SEED: 'demo' }).SEED).toBe('demo');
    expect(parseConfig({}).SEED).toBe('demo');
  });
});

describe('npm run serve refuses', () => {
  it('without SITE_URL, before the data folder is touched', () => {
    const dataDir = path.join(makeDataDir(), 'not-created');
    const run = runServe({ SITE_URL: '', DATA_DIR: dataDir, SERVE_DIR: siteCopyFor(path.dirname(dataDir)) });
    expectRefusal(run, 'SITE_URL is not set');
    expect(fs.existsSync(dataDir)).toBe(false);
  });

  it('a bad value, naming it', () => {
    const dataDir = makeDataDir();
    expectRefusal(runServe({ SITE_URL: 'news.example', DATA_DIR: dataDir, SERVE_DIR: siteCopyFor(dataDir) }), 'SITE_URL');
  });

  it('a DATA_DIR it cannot write: an immutable folder, or a path through a file', () => {
    const dataDir = makeDataDir();
    const serveDir = siteCopyFor(dataDir);
    undo.push(makeUnwritable(dataDir));
    expectRefusal(runServe({ DATA_DIR: dataDir, SERVE_DIR: serveDir }), `DATA_DIR (${dataDir}) is not writable`);
    expect(fs.readdirSync(dataDir)).toEqual([]);

    const file = path.join(makeDataDir(), 'a-file');
    fs.writeFileSync(file, '');
    expectRefusal(
      runServe({ DATA_DIR: path.join(file, 'data'), SERVE_DIR: serveDir }),
      `DATA_DIR (${path.join(file, 'data')}) is not writable (ENOTDIR)`,
    );
  });

  it('a served folder, or a parent of it, that it cannot write', () => {
    const dataDir = makeDataDir();
    const serveDir = siteCopyFor(dataDir);
    undo.push(makeUnwritable(serveDir));
    expectRefusal(runServe({ DATA_DIR: dataDir, SERVE_DIR: serveDir }), `The served folder (${serveDir}) is not writable`);
    undo.pop()!();
    undo.push(makeUnwritable(path.dirname(serveDir)));
    expectRefusal(
      runServe({ DATA_DIR: dataDir, SERVE_DIR: serveDir }),
      `The served folder's parent (${path.dirname(serveDir)}) is not writable`,
    );
    // Refused before the store was opened: no lock, no layout marker.
    expect(fs.readdirSync(dataDir)).toEqual([]);
  });

  it('a served folder that does not exist', () => {
    const dataDir = makeDataDir();
    expectRefusal(runServe({ DATA_DIR: dataDir, SERVE_DIR: path.join(dataDir, 'missing') }), 'does not exist: run `npm run rebuild`');
  });
});

describe('npm run serve on a fresh data folder', () => {
  it('seeds nothing and creates no admin without ADMIN_PASSWORD; `npm run user -- add` makes the first one', async () => {
    const dataDir = makeDataDir();
    const first = await startServer({ dataDir, env: { SEED: '', ADMIN_PASSWORD: '' } });
    try {
      const { body } = await read<{ count: number }>(await new TestClient(first.url).get('/api/articles/count'));
      expect(body.count).toBe(0);
      expect(first.output()).toContain('No admin account yet: stop the server and run `npm run user -- add NAME`');
      expect(first.output()).not.toMatch(/password:/i);
    } finally {
      await first.stop();
    }

    const add = spawnSync(process.execPath, [path.join(ROOT, 'scripts/user.ts'), 'add', 'chief', '--password', 'a-long-first-password'], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: dataDir, ...(await storeEnvFor(dataDir)) },
      encoding: 'utf8',
    });
    expect(add.status, add.stderr).toBe(0);

    const second = await startServer({ dataDir, env: { SEED: '', ADMIN_PASSWORD: '' } });
    try {
      expect(second.output()).not.toContain('No admin account yet');
      const client = new TestClient(second.url);
      await client.login('chief', 'a-long-first-password');
      const { body } = await read<{ count: number }>(await client.get('/api/articles/count'));
      expect(body.count).toBe(0);
    } finally {
      await second.stop();
    }
    // Two server starts and stops and a script of its own: more than the default on a loaded CI machine.
  }, 120_000);
});
