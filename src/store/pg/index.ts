/** The PostgreSQL store: every repository over one connection pool, schema migrated at open; chosen by DATABASE_URL. */
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Store, StoreMode } from '../types.ts';
import { acquireLock } from '../lock-file.ts';
import { CONNECT_TIMEOUT_MS, createPool, toJson, type QueryTimeout } from './db.ts';
import { migrate, pendingMigrations } from './migrate.ts';
import { PgArticles } from './articles.ts';
import { PgAnalytics } from './analytics.ts';
import { PgComments, PgCounters, PgJobs, PgLimits, PgMeta, PgSessions, PgSources } from './collections.ts';
import { PgAudit, PgBriefings, PgSubscribers, PgUsers } from './people.ts';
import { PgRevisions, PgTrash } from './history.ts';
import { PgRenderedPages } from './pages.ts';
import { PgLive } from './live.ts';
import { PgMembers } from './members.ts';

/**
 * Opens the store in the database at `url`. DATA_DIR still holds images, the outbox and the server's
 * address, so a `write` open takes its lock as the lowdb store does; `read` (builds, reports) gets
 * connections that refuse writes and never migrates.
 */
export async function openPgStore(
  url: string,
  dataDir: string,
  mode: StoreMode = 'write',
  limits: { queryTimeoutMs?: QueryTimeout } = {},
): Promise<Store> {
  const dir = path.resolve(dataDir);
  fs.mkdirSync(dir, { recursive: true });
  const readOnly = mode === 'read';
  const release = readOnly ? () => {} : acquireLock(dir);
  // A writer (a server) never waits long for a connection; a read-only open (a build) renders pages in
  // parallel, and may wait its turn for one of the pool's connections.
  const pool = createPool(url, readOnly, readOnly ? {} : { connectionTimeoutMillis: CONNECT_TIMEOUT_MS, ...limits });
  try {
    if (readOnly) {
      const pending = await pendingMigrations(pool);
      if (pending.length)
        throw new Error(`The database is not migrated (pending: ${pending.join(', ')}). Run npm run db:migrate, or start the server once.`);
    } else {
      await migrate(pool);
      await pool.query(`INSERT INTO meta (key, value) VALUES ('storeId', $1) ON CONFLICT (key) DO NOTHING`, [toJson(randomUUID())]);
    }
    const meta = new PgMeta(pool);
    const storeId = await meta.get<string>('storeId');
    let closed = false;
    return {
      id: typeof storeId === 'string' ? storeId : 'unseeded',
      articles: new PgArticles(pool),
      counters: new PgCounters(pool),
      comments: new PgComments(pool),
      sources: new PgSources(pool),
      subscribers: new PgSubscribers(pool),
      briefings: new PgBriefings(pool),
      users: new PgUsers(pool),
      audit: new PgAudit(pool),
      sessions: new PgSessions(pool),
      jobs: new PgJobs(pool),
      limits: new PgLimits(pool),
      meta,
      revisions: new PgRevisions(pool),
      trash: new PgTrash(pool),
      pages: new PgRenderedPages(pool, url),
      analytics: new PgAnalytics(pool),
      live: new PgLive(pool),
      members: new PgMembers(pool),
      kind: 'postgres',
      async check() {
        if (closed) return { ok: false, reason: 'the store is closed' };
        try {
          const pending = await pendingMigrations(pool);
          return pending.length ? { ok: false, reason: `migrations pending: ${pending.join(', ')}` } : { ok: true };
        } catch (error) {
          // The driver's own words (connect ECONNREFUSED 127.0.0.1:5432) say more to an operator than ours.
          const cause = (error as Error).cause instanceof Error ? ((error as Error).cause as Error) : (error as Error);
          const words = cause.message || (cause as { code?: string }).code || String(cause);
          return { ok: false, reason: `the database does not answer: ${words}` };
        }
      },
      async close() {
        if (closed) return;
        closed = true;
        // pool.end() waits for the queries in flight: every write is committed before the lock is given up.
        await pool.end();
        release();
      },
    };
  } catch (error) {
    await pool.end().catch(() => {});
    release();
    throw error;
  }
}
