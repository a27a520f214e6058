/**
 * The PostgreSQL store in a backup: `pg_dump --format=custom` of the database and `pg_restore` into an
 * empty one, with Debian's client tools, and what a dump needs said in a sentence when they do not fit.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Db } from './db.ts';

const run = promisify(execFile);

/** A PostgreSQL client tool that is missing, too old for the server, or failed: the message is the sentence to show. */
export class PgToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PgToolError';
  }
}

/** The tool's path: in PG_BIN, else the newest of Debian's /usr/lib/postgresql/N/bin, else on PATH. */
export function pgToolPath(tool: 'pg_dump' | 'pg_restore'): string {
  if (process.env.PG_BIN) return path.join(process.env.PG_BIN, tool);
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root) ? fs.readdirSync(root).filter((v) => fs.existsSync(path.join(root, v, 'bin', tool))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], 'bin', tool) : tool;
}

/** The tool's major version (`pg_dump (PostgreSQL) 15.14` -> 15), or a PgToolError saying how to install it. */
export async function pgToolMajor(tool: 'pg_dump' | 'pg_restore'): Promise<{ path: string; major: number }> {
  const file = pgToolPath(tool);
  let stdout: string;
  try {
    ({ stdout } = await run(file, ['--version']));
  } catch {
    throw new PgToolError(
      `${tool} was not found (${file}): install PostgreSQL's client tools (Debian: apt-get install postgresql-client) or set PG_BIN to their folder.`,
    );
  }
  const major = Number(/\(PostgreSQL\)\s+(\d+)/.exec(stdout)?.[1]);
  if (!Number.isInteger(major)) throw new PgToolError(`${file} --version did not name a PostgreSQL version (${stdout.trim()}).`);
  return { path: file, major };
}

/** The server's major version. */
export async function serverMajor(db: Db): Promise<number> {
  const { rows } = await db.query<{ v: string }>(`SELECT current_setting('server_version_num') AS v`);
  return Math.floor(Number(rows[0]!.v) / 10_000);
}

/**
 * The URL without its password, which goes to the tool in PGPASSWORD instead: a command line is
 * readable by every user of the machine (ps), the environment of a process only by its owner.
 */
function connectionFor(url: string): { dbname: string; env: NodeJS.ProcessEnv } {
  const parsed = new URL(url);
  const password = parsed.password ? decodeURIComponent(parsed.password) : undefined;
  parsed.password = '';
  return { dbname: parsed.toString(), env: { ...process.env, ...(password === undefined ? {} : { PGPASSWORD: password }) } };
}

/** Runs a tool, answering its stderr's last lines in the error when it fails (never the URL's password: it is not in its arguments). */
function runTool(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) resolve();
      else
        reject(
          new PgToolError(
            `${path.basename(file)} failed (${signal ?? `exit code ${code}`}): ${stderr.trim().split('\n').slice(-3).join(' ')}`,
          ),
        );
    });
  });
}

/** Dumps the database at `url` into `file` (custom format); answers pg_dump's major version. */
export async function dumpDatabase(db: Db, url: string, file: string): Promise<{ toolMajor: number; serverMajor: number }> {
  const tool = await pgToolMajor('pg_dump');
  const server = await serverMajor(db);
  if (tool.major < server)
    throw new PgToolError(
      `pg_dump ${tool.major} (${tool.path}) cannot dump a PostgreSQL ${server} server: install the version ${server} client tools ` +
        `(Debian: apt-get install postgresql-client-${server}) or set PG_BIN to their folder.`,
    );
  const { dbname, env } = connectionFor(url);
  await runTool(tool.path, ['--format=custom', '--no-owner', '--no-acl', `--file=${file}`, `--dbname=${dbname}`], env);
  return { toolMajor: tool.major, serverMajor: server };
}

/** Whether the database holds no table, view or sequence of its own (a fresh `createdb`). */
export async function isDatabaseEmpty(db: Db): Promise<boolean> {
  const { rows } = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
     WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f') AND s.nspname NOT IN ('pg_catalog', 'information_schema') AND s.nspname NOT LIKE 'pg_toast%'`,
  );
  return Number(rows[0]!.n) === 0;
}

/** The schema migrations a database has applied, by number. */
export async function appliedMigrations(db: Db): Promise<number[]> {
  const { rows } = await db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
  return rows.map((r) => r.version);
}

/** The store's id and its articles' version, as the manifest names them. */
export async function describeDatabase(db: Db): Promise<{ storeId: string | undefined; articlesVersion: number }> {
  const id = await db.query<{ value: unknown }>(`SELECT value FROM meta WHERE key = 'storeId'`);
  const version = await db.query<{ value: string }>(`SELECT value FROM store_state WHERE name = 'articles_version'`);
  const storeId = id.rows[0]?.value;
  return { storeId: typeof storeId === 'string' ? storeId : undefined, articlesVersion: Number(version.rows[0]?.value ?? 0) };
}

/**
 * Restores a custom-format dump into the (empty) database at `url` in one transaction: a failure
 * leaves it empty. `dumpMajor` is the pg_dump that made it: an older pg_restore cannot read its file.
 */
export async function restoreDatabase(url: string, file: string, dumpMajor: number): Promise<void> {
  const tool = await pgToolMajor('pg_restore');
  if (tool.major < dumpMajor)
    throw new PgToolError(
      `The dump was made by pg_dump ${dumpMajor} and pg_restore ${tool.major} (${tool.path}) cannot read it: install the version ${dumpMajor} ` +
        `client tools (Debian: apt-get install postgresql-client-${dumpMajor}) or set PG_BIN to their folder.`,
    );
  const { dbname, env } = connectionFor(url);
  await runTool(tool.path, ['--single-transaction', '--exit-on-error', '--no-owner', '--no-acl', `--dbname=${dbname}`, file], env);
}

/** Gives a restored database a store id of its own (see renewLowdbStoreId). */
export async function renewDatabaseStoreId(db: Db, storeId: string): Promise<void> {
  await db.query(`INSERT INTO meta (key, value) VALUES ('storeId', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, [
    JSON.stringify(storeId),
  ]);
}
