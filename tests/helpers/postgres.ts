/**
 * A throwaway PostgreSQL cluster for a test run (vitest globalSetup): Debian's binaries, initdb in a
 * temp folder on a free port, one fresh database per test store or server, removed at the end.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../scripts/server-process.ts';

/** The cluster's admin URL (database `postgres`), handed to the test workers through the environment. */
export const ADMIN_URL_ENV = 'MERIDIAN_TEST_PG_URL';

/** The newest PostgreSQL under /usr/lib/postgresql (Debian's layout), or PG_BIN. */
export function postgresBinDir(): string | undefined {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return undefined;
  const versions = fs.readdirSync(root).filter((v) => fs.existsSync(path.join(root, v, 'bin/initdb')));
  versions.sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], 'bin') : undefined;
}

export type Cluster = {
  url: string;
  dir: string;
  /** Stops and removes the cluster. */
  stop: () => void;
  /**
   * Stops the database server and keeps its files (a database that went down), until `resume`:
   * `immediate` (a crash) by default, or `fast` (an operator's restart: sessions are ended, transactions rolled back).
   */
  halt: (mode?: 'fast' | 'immediate') => void;
  resume: () => void;
};

/** initdb and pg_ctl refuse to run as root: as root they run as the `postgres` user, in a folder it owns. */
export async function startCluster(): Promise<Cluster> {
  const bin = postgresBinDir();
  if (!bin) {
    throw new Error(
      'The tests need PostgreSQL (Debian: apt-get install -y postgresql), and initdb was not found under /usr/lib/postgresql. Set PG_BIN to its bin folder.',
    );
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-pg-'));
  const asRoot = process.getuid?.() === 0;
  const run = (file: string, args: string[]) =>
    asRoot
      ? execFileSync('runuser', ['-u', 'postgres', '--', path.join(bin, file), ...args], { stdio: 'pipe' })
      : execFileSync(path.join(bin, file), args, { stdio: 'pipe' });
  if (asRoot) execFileSync('chown', ['postgres:postgres', dir]);
  const data = path.join(dir, 'data');
  const port = await freePort();
  // No syncs to the disk: a test cluster is thrown away, and a database crash (halt) keeps what the
  // kernel holds. Commits still write their WAL before they answer (synchronous_commit stays on): the
  // outage tests crash the server, and a commit it had acknowledged must be there when it comes back
  // (with it off, a migration or a write of the last half second was lost in the crash).
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    '-c listen_addresses=127.0.0.1',
    '-c fsync=off',
    '-c full_page_writes=off',
    '-c max_connections=300',
  ].join(' ');
  const start = () => run('pg_ctl', ['-D', data, '-l', path.join(dir, 'log'), '-w', '-t', '60', '-o', options, 'start']);
  let halted = false;
  try {
    run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync']);
    start();
  } catch (error) {
    const log = fs.existsSync(path.join(dir, 'log')) ? fs.readFileSync(path.join(dir, 'log'), 'utf8') : '';
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`Could not start the test PostgreSQL cluster: ${(error as Error).message}\n${log}`, { cause: error });
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dir,
    stop: () => {
      try {
        if (!halted) run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
    halt: (mode = 'immediate') => {
      run('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
      halted = true;
    },
    resume: () => {
      start();
      halted = false;
    },
  };
}

/** The URL of database `name` on the cluster at `adminUrl`. */
function urlOf(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * A database of its own for `key` (a test's data folder), created on first use: the same key gives
 * the same database, so a store reopened or a server restarted on that folder finds its data.
 */
export async function databaseFor(key: string): Promise<string> {
  const adminUrl = process.env[ADMIN_URL_ENV];
  if (!adminUrl)
    throw new Error(`No test PostgreSQL cluster: ${ADMIN_URL_ENV} is unset (tests/helpers/postgres.ts runs as vitest globalSetup).`);
  return createDatabase(adminUrl, `t_${createHash('sha256').update(path.resolve(key)).digest('hex').slice(0, 24)}`);
}

/** Database `name` (a plain lowercase identifier) on the cluster at `adminUrl`, created unless it exists; its URL. */
export async function createDatabase(adminUrl: string, name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`Not a plain database name: ${name}`);
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } catch (error) {
    if ((error as { code?: string }).code !== '42P04') throw error; // 42P04: it exists already.
  } finally {
    await client.end();
  }
  return urlOf(adminUrl, name);
}

/**
 * Whether this run's servers and stores use PostgreSQL (TEST_STORE=pg). A file that runs once
 * (TEST_STORE=none, tests/helpers/store-plan.ts) and asks anyway would go untested on PostgreSQL: it fails.
 */
export function testingPostgres(): boolean {
  if (process.env.TEST_STORE === 'none')
    throw new Error(
      'This file runs once, without a store (RUN_ONCE in tests/helpers/store-plan.ts), yet it asked which store to use: take it off that list so it runs on both stores.',
    );
  return process.env.TEST_STORE === 'pg';
}

/** Environment for a script run on a test's DATA_DIR: with TEST_STORE=pg, the database that folder's server uses. */
export async function storeEnvFor(dataDir: string | undefined): Promise<Record<string, string>> {
  return testingPostgres() && dataDir ? { DATABASE_URL: await databaseFor(dataDir) } : {};
}

/** openStore options for a test's DATA_DIR: lowdb in the folder, or (TEST_STORE=pg) the database its server uses. */
export async function storeOptionsFor(dataDir: string): Promise<{ databaseUrl: string | undefined }> {
  return { databaseUrl: testingPostgres() ? await databaseFor(dataDir) : undefined };
}

/** vitest globalSetup: one cluster for the run, removed when it ends; `npm test` starts it before vitest and Playwright share it. */
export default async function setup(): Promise<(() => void) | undefined> {
  if (process.env[ADMIN_URL_ENV]) return undefined;
  const cluster = await startCluster();
  process.env[ADMIN_URL_ENV] = cluster.url;
  return () => cluster.stop();
}
