/** What a backup and a restore need from each store, behind its boundary: a point-in-time copy of DATA_DIR, a dump of the database. */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { createPool, type Db } from './pg/db.ts';
import { MIGRATIONS } from './pg/migrations/index.ts';
import {
  appliedMigrations,
  describeDatabase,
  dumpDatabase,
  isDatabaseEmpty,
  PgToolError,
  renewDatabaseStoreId,
  restoreDatabase,
} from './pg/dump.ts';

export {
  describeLowdbFolder,
  isLeftOut,
  LOWDB_LAYOUT,
  renewLowdbStoreId,
  snapshotDataDir,
  RESTORE_PREFIX,
  removeStaleStaging,
} from './lowdb/snapshot.ts';
export type { Snapshot, SnapshotFile } from './lowdb/snapshot.ts';
export { PgToolError } from './pg/dump.ts';
export { acquireLock as lockDataDir } from './lock-file.ts';

/** The newest schema migration this code knows: a dump whose database applied a later one is from a newer version. */
export const NEWEST_MIGRATION = Math.max(...MIGRATIONS.map((m) => m.version));

async function withPool<T>(url: string, work: (pool: Db) => Promise<T>): Promise<T> {
  const pool = createPool(url, false);
  try {
    return await work(pool);
  } finally {
    await pool.end();
  }
}

export type DatabaseDump = {
  storeId: string | undefined;
  articlesVersion: number;
  migrations: number[];
  pgDumpMajor: number;
  serverMajor: number;
};

/** Dumps the database at `url` into `file` (pg_dump's custom format) and answers what the manifest says of it. */
export function dumpDatabaseTo(url: string, file: string): Promise<DatabaseDump> {
  return withPool(url, async (db) => {
    // Read before the dump: a start that migrates meanwhile would make the dump newer, never older, than named.
    const migrations = await appliedMigrations(db).catch(() => {
      throw new PgToolError('The database at DATABASE_URL holds no Meridian store (no schema_migrations table): nothing to back up.');
    });
    const described = await describeDatabase(db);
    const { toolMajor, serverMajor } = await dumpDatabase(db, url, file);
    return { ...described, migrations, pgDumpMajor: toolMajor, serverMajor };
  });
}

/** Whether the database at `url` is empty (a restore's target must be). */
export function databaseIsEmpty(url: string): Promise<boolean> {
  return withPool(url, isDatabaseEmpty);
}

/** Restores a dump into the empty database at `url` (one transaction), then gives it the store id `storeId`. */
export async function restoreDatabaseFrom(url: string, file: string, dumpMajor: number, storeId: string): Promise<void> {
  await restoreDatabase(url, file, dumpMajor);
  await withPool(url, (db) => renewDatabaseStoreId(db, storeId));
}

/**
 * Copies DATA_DIR/images of one data folder into another's (db:import, db:export): the processed images
 * stay beside the store they belong to. Existing files are kept (an image's name is its content's hash).
 * Answers how many files were copied.
 */
export async function copyImages(fromDataDir: string, toDataDir: string, onFile?: (done: number, total: number) => void): Promise<number> {
  const from = path.join(path.resolve(fromDataDir), 'images');
  const to = path.join(path.resolve(toDataDir), 'images');
  if (from === to || !fs.existsSync(from)) return 0;
  const files = (await fsp.readdir(from, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile() && !entry.name.endsWith('.tmp'))
    .map((entry) => path.relative(from, path.join(entry.parentPath, entry.name)));
  let done = 0;
  for (const file of files) {
    const target = path.join(to, file);
    if (!fs.existsSync(target)) {
      await fsp.mkdir(path.dirname(target), { recursive: true });
      // Under a temp name first: a copy cut short must not leave half an image under its real name.
      const temp = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.tmp`);
      await fsp.copyFile(path.join(from, file), temp);
      await fsp.rename(temp, target);
    }
    onFile?.(++done, files.length);
  }
  return files.length;
}

/**
 * The app secret a running server keeps in its store, read without opening the store (a lowdb open
 * reads every article file): the key of the internal calls a script makes to that server.
 */
export async function readStoredAppSecret(dataDir: string, databaseUrl: string | undefined): Promise<string | undefined> {
  if (databaseUrl) {
    return withPool(databaseUrl, async (db) => {
      const { rows } = await db.query<{ value: unknown }>(`SELECT value FROM meta WHERE key = 'appSecret'`);
      return typeof rows[0]?.value === 'string' ? rows[0].value : undefined;
    });
  }
  try {
    const meta = JSON.parse(await fsp.readFile(path.join(path.resolve(dataDir), 'meta.json'), 'utf8')) as { appSecret?: unknown };
    return typeof meta.appSecret === 'string' ? meta.appSecret : undefined;
  } catch {
    return undefined;
  }
}
