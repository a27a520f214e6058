/** The PostgreSQL store's versioned migrations on a real cluster: applied once, in order, by the server's start or `npm run db:migrate`. */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPool, type Db } from '../../src/store/pg/db.ts';
import { migrate, pendingMigrations } from '../../src/store/pg/migrate.ts';
import { MIGRATIONS } from '../../src/store/pg/migrations/index.ts';
import { openStore } from '../../src/store/index.ts';
import { databaseFor } from '../helpers/postgres.ts';
import { ROOT } from '../helpers/server.ts';
import { makeTempDir } from './support.ts';

const pools: Db[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.end();
});

async function freshPool(): Promise<{ url: string; pool: Db }> {
  const url = await databaseFor(makeTempDir('meridian-migrate-'));
  const pool = createPool(url, false);
  pools.push(pool);
  return { url, pool };
}

describe('PostgreSQL migrations', () => {
  it('applies each migration once, in order, and only the new ones later', async () => {
    const { pool } = await freshPool();
    expect(await pendingMigrations(pool)).toEqual(MIGRATIONS.map((m) => m.name));
    expect(await migrate(pool)).toEqual(MIGRATIONS.map((m) => m.name));
    expect(await migrate(pool)).toEqual([]);
    const next = [...MIGRATIONS, { version: 999, name: '999-test', sql: 'CREATE TABLE later_table (id int)' }];
    expect(await pendingMigrations(pool, next)).toEqual(['999-test']);
    expect(await migrate(pool, next)).toEqual(['999-test']);
    const { rows } = await pool.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    expect(rows.map((r) => r.version)).toEqual(next.map((m) => m.version));
  });

  it('fills the tag and author slugs of the articles already stored (migration 5, issue 35)', async () => {
    const { pool } = await freshPool();
    await migrate(
      pool,
      MIGRATIONS.filter((m) => m.version < 5),
    );
    const doc = { id: 'old-1', slug: 'old-1', tags: ['Climate Change', 'climate-change', 'Énergie', '??'], authorName: 'Inés Ortega' };
    await pool.query(
      `INSERT INTO articles (id, slug, status, section, is_breaking, is_editors_pick, sort_date, updated_at, filter_text, search, doc)
       VALUES ('old-1', 'old-1', 'published', 'world', false, false, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '', ''::tsvector, $1::jsonb)`,
      [JSON.stringify(doc)],
    );
    expect(await migrate(pool)).toEqual(MIGRATIONS.filter((m) => m.version >= 5).map((m) => m.name));
    const { rows } = await pool.query<{ tag_slugs: string[]; tag_names: string[]; author_slug: string }>(
      'SELECT tag_slugs, tag_names, author_slug FROM articles WHERE id = $1',
      ['old-1'],
    );
    expect(rows[0]).toEqual({
      tag_slugs: ['climate-change', 'energie'],
      tag_names: ['Climate Change', 'Énergie'],
      author_slug: 'ines-ortega',
    });
  });

  it('rolls a failing migration back whole, and records nothing for it', async () => {
    const { pool } = await freshPool();
    await migrate(pool);
    const broken = [...MIGRATIONS, { version: 998, name: '998-broken', sql: 'CREATE TABLE half_done (id int); SELECT no_such_function()' }];
    await expect(migrate(pool, broken)).rejects.toThrow(/998-broken failed/);
    expect((await pool.query(`SELECT to_regclass('half_done') AS t`)).rows[0].t).toBeNull();
    expect(await pendingMigrations(pool, broken)).toEqual(['998-broken']);
  });

  it('lets servers starting together migrate once (an advisory lock), and a read-only open refuses an unmigrated database', async () => {
    const { url, pool } = await freshPool();
    await expect(openStore(makeTempDir(), 'read', { databaseUrl: url })).rejects.toThrow(/not migrated/);
    const stores = await Promise.all([1, 2, 3].map(() => openStore(makeTempDir(), 'write', { databaseUrl: url })));
    expect(new Set(stores.map((s) => s.id)).size).toBe(1);
    for (const store of stores) await store.close();
    expect((await pool.query('SELECT count(*)::int AS n FROM schema_migrations')).rows[0].n).toBe(MIGRATIONS.length);
  });

  it('npm run db:migrate applies what is pending, then reports the schema up to date', async () => {
    const { url } = await freshPool();
    const run = () =>
      spawnSync(process.execPath, [path.join(ROOT, 'scripts/db.ts'), 'migrate'], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: url },
        encoding: 'utf8',
      });
    const first = run();
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toContain('applied 001-initial');
    expect(run().stdout).toContain('up to date');
    const missing = spawnSync(process.execPath, [path.join(ROOT, 'scripts/db.ts'), 'migrate'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: '' },
      encoding: 'utf8',
    });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('DATABASE_URL is not set');
  });
});
