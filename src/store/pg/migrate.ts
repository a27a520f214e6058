/** Versioned schema migrations for the PostgreSQL store: numbered migrations applied once each, in order, under an advisory lock. */
import type pg from 'pg';
import { MIGRATIONS, type Migration } from './migrations/index.ts';

/** Any constant: servers starting together wait for one another instead of applying a file twice. */
const LOCK_KEY = 0x6d657269;

/** Applies every migration not yet applied, each in one transaction with its record; answers the names applied. */
export async function migrate(pool: pg.Pool, migrations: readonly Migration[] = MIGRATIONS): Promise<string[]> {
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const done = new Set(rows.map((r) => r.version));
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await migration.backfill?.(client);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new Error(`Migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push(migration.name);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => {});
    client.release();
  }
  return applied;
}

/** Whether every migration file is applied (a read-only open checks it instead of migrating). */
export async function pendingMigrations(pool: pg.Pool, migrations: readonly Migration[] = MIGRATIONS): Promise<string[]> {
  const exists = await pool.query<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t");
  if (!exists.rows[0]?.t) return migrations.map((m) => m.name);
  const { rows } = await pool.query<{ version: number }>('SELECT version FROM schema_migrations');
  const done = new Set(rows.map((r) => r.version));
  return migrations.filter((m) => !done.has(m.version)).map((m) => m.name);
}
