/** The PostgreSQL store's maintenance operations (migrate, import, export) as the scripts see them, behind the store's own boundary. */
import path from 'node:path';
import { createPool, type Db } from './pg/db.ts';
import { migrate, pendingMigrations } from './pg/migrate.ts';
import { MIGRATIONS } from './pg/migrations/index.ts';
import { openPgStore } from './pg/index.ts';
import { exportToLowdb, importLowdb, type Counts } from './pg/transfer.ts';

export type { Counts } from './pg/transfer.ts';

async function withPool<T>(url: string, work: (pool: Db) => Promise<T>): Promise<T> {
  const pool = createPool(url, false);
  try {
    return await work(pool);
  } finally {
    await pool.end();
  }
}

/**
 * The migrations the database has not applied yet, read on one read-only connection without applying
 * any (`npm run doctor`); rejects when the database does not answer within `timeoutMs`.
 */
export async function readPendingMigrations(url: string, timeoutMs: number): Promise<{ pending: string[]; applied: number }> {
  const pool = createPool(url, true, { max: 1, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  try {
    const pending = await pendingMigrations(pool);
    return { pending, applied: MIGRATIONS.length - pending.length };
  } finally {
    await pool.end();
  }
}

/** Applies the schema migrations not yet applied; answers their names. */
export function migrateDatabase(url: string): Promise<string[]> {
  return withPool(url, (pool) => migrate(pool));
}

/** Copies the lowdb store in `from` into the (empty) database, comparing counts on both sides. */
export function importIntoDatabase(url: string, from: string): Promise<Counts> {
  return withPool(url, async (pool) => {
    await migrate(pool);
    // The imported store takes a folder of its own for the lock it holds while counting.
    return importLowdb(from, pool, () => openPgStore(url, from, 'read'));
  });
}

/** Writes the database into `target` (new or empty) as a lowdb DATA_DIR, comparing counts on both sides. */
export function exportFromDatabase(url: string, dataDir: string, target: string): Promise<Counts> {
  return withPool(url, async (pool) => {
    const source = await openPgStore(url, dataDir, 'read');
    try {
      return await exportToLowdb(pool, source, path.resolve(target));
    } finally {
      await source.close();
    }
  });
}
