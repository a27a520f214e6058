/**
 * `npm run doctor` on real configurations: a real PostgreSQL database, a real SMTP server, real
 * folders. A good one passes; each fault gives its own line with the fix, and exit code 1.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { migrateDatabase } from '../../src/store/database.ts';
import { freePort } from '../../scripts/server-process.ts';
import { createDatabase, ADMIN_URL_ENV, testingPostgres } from '../helpers/postgres.ts';
import { makeUnwritable } from '../helpers/read-only.ts';
import { ROOT, makeDataDir, siteCopyFor, startServer } from '../helpers/server.ts';
import { SMTP_USER, startSmtp, type TestSmtp } from '../helpers/smtp.ts';

let smtp: TestSmtp;
let migrated: string;
let unmigrated: string;
const undo: (() => void)[] = [];

/** A production configuration that passes: https SITE_URL, a migrated database, an SMTP server that answers. */
function goodEnv(): Record<string, string> {
  const dataDir = makeDataDir();
  return {
    SITE_URL: 'https://news.example',
    DATA_DIR: dataDir,
    SERVE_DIR: siteCopyFor(dataDir),
    DATABASE_URL: migrated,
    SMTP_URL: smtp.url,
    SEED: '',
  };
}

/** The doctor in a child process; asynchronous, since the SMTP server answering it runs in this one. */
async function runDoctor(env: Record<string, string>) {
  const child = spawn(process.execPath, [path.join(ROOT, 'scripts/doctor.ts')], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: '', SMTP_URL: '', APP_SECRET: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [status] = (await once(child, 'close')) as [number | null];
  const lines = stdout.trim().split('\n');
  return { status, stdout, stderr, lines, problems: lines.filter((line) => line.startsWith('PROBLEM ')) };
}

// The same whatever TEST_STORE says (it picks its stores itself): run once, in the lowdb pass of `npm test`.
describe.skipIf(testingPostgres())('npm run doctor', () => {
  beforeAll(async () => {
    smtp = await startSmtp();
    const admin = process.env[ADMIN_URL_ENV]!;
    const suffix = `${process.pid}_${Date.now()}`;
    migrated = await createDatabase(admin, `doctor_ok_${suffix}`);
    await migrateDatabase(migrated);
    unmigrated = await createDatabase(admin, `doctor_new_${suffix}`);
  });

  afterAll(async () => {
    await smtp?.stop();
  });

  afterEach(() => {
    for (const restore of undo.splice(0).reverse()) restore();
  });

  it('passes a good production configuration, one ok line per check', async () => {
    const run = await runDoctor(goodEnv());
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.problems).toEqual([]);
    for (const name of ['Node', 'SITE_URL', 'SEED', 'DATA_DIR', 'served folder', 'build', 'store', 'SMTP', 'disk'])
      expect(
        run.lines.some((line) => line.startsWith(`ok      ${name}`)),
        name,
      ).toBe(true);
    expect(run.stdout).toMatch(/ok {6}store: PostgreSQL at postgres:\/\/127\.0\.0\.1:\d+\/doctor_ok_\S+ answers, \d+ migrations applied/);
    expect(run.stdout).toContain('SMTP: smtp://127.0.0.1:');
    expect(run.lines.at(-1)).toMatch(/^All \d+ checks passed\.$/);
  });

  it('names a database nobody answers at, without its password', async () => {
    const port = await freePort();
    const run = await runDoctor({ ...goodEnv(), DATABASE_URL: `postgres://meridian:db-secret@127.0.0.1:${port}/meridian` });
    expect(run.status).toBe(1);
    expect(run.problems).toEqual([
      expect.stringMatching(
        new RegExp(
          `^PROBLEM store: PostgreSQL at postgres://127\\.0\\.0\\.1:${port}/meridian failed \\(.*ECONNREFUSED.*\\): check DATABASE_URL`,
        ),
      ),
    ]);
    expect(run.stdout).not.toContain('db-secret');
  });

  it('names the migrations a database lacks, without applying them', async () => {
    const run = await runDoctor({ ...goodEnv(), DATABASE_URL: unmigrated });
    expect(run.status).toBe(1);
    expect(run.problems).toEqual([
      expect.stringMatching(/^PROBLEM store: .* lacks migrations 001-initial, .*: run `npm run db:migrate`\.$/),
    ]);
    // Still none: a second look finds the same.
    expect((await runDoctor({ ...goodEnv(), DATABASE_URL: unmigrated })).problems).toHaveLength(1);
  });

  it('names a folder the server could not write', async () => {
    const env = goodEnv();
    undo.push(makeUnwritable(env.SERVE_DIR!));
    const run = await runDoctor(env);
    expect(run.status).toBe(1);
    expect(run.problems).toEqual([
      `PROBLEM served folder: The served folder (${env.SERVE_DIR}) is not writable (${process.getuid?.() === 0 ? 'EPERM' : 'EACCES'}): give the server's user write access to it, e.g. \`chown -R meridian: ${env.SERVE_DIR}\`.`,
    ]);
  });

  it('names an SMTP port nobody listens on, without the credentials', async () => {
    const port = await freePort();
    const run = await runDoctor({ ...goodEnv(), SMTP_URL: `smtp://${SMTP_USER.user}:${SMTP_USER.pass}@127.0.0.1:${port}` });
    expect(run.status).toBe(1);
    expect(run.problems).toEqual([
      expect.stringMatching(new RegExp(`^PROBLEM SMTP: smtp://127\\.0\\.0\\.1:${port} failed \\(.*ECONNREFUSED.*\\): check SMTP_URL`)),
    ]);
    expect(run.stdout).not.toContain(SMTP_USER.pass);
  });

  it('refuses an unsafe configuration: http SITE_URL, SEED=demo, a bad value', async () => {
    const unsafe = await runDoctor({ ...goodEnv(), SITE_URL: 'http://news.example', SEED: 'demo' });
    expect(unsafe.status).toBe(1);
    expect(unsafe.problems.map((line) => line.split(':')[0])).toEqual(['PROBLEM SITE_URL', 'PROBLEM SEED']);
    const bad = await runDoctor({ ...goodEnv(), PORT: 'eighty' });
    expect(bad.status).toBe(1);
    expect(bad.problems).toEqual([expect.stringMatching(/^PROBLEM configuration: Invalid configuration: PORT: /)]);
  });

  it('leaves a running server alone: the lowdb store stays locked by it, and doctor reports who holds it', async () => {
    const dataDir = makeDataDir();
    const server = await startServer({ dataDir, env: { DATABASE_URL: '' } });
    try {
      const lock = fs.readFileSync(path.join(dataDir, '.lock'), 'utf8');
      const run = await runDoctor({ ...goodEnv(), DATABASE_URL: '', DATA_DIR: dataDir, SERVE_DIR: server.clientDir });
      expect(run.status, run.stdout).toBe(0);
      expect(run.stdout).toContain(`store: lowdb in ${dataDir}: current layout, open in a running server (pid ${server.process.pid})`);
      expect(fs.readFileSync(path.join(dataDir, '.lock'), 'utf8')).toBe(lock);
      expect((await fetch(`${server.url}/api/health`)).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});
