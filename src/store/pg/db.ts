/** The connection pool and the small helpers every PostgreSQL repository shares. */
import pg from 'pg';

export type Db = pg.Pool;

/**
 * PostgreSQL text cannot hold U+0000: a string with one would fail the whole statement (a 500 for
 * a lookup by a hostile id). It becomes U+FFFD, so such a lookup finds nothing, as it would in lowdb.
 */
function withoutNul(value: unknown): unknown {
  return typeof value === 'string' && value.includes('\u0000') ? value.replaceAll('\u0000', '\uFFFD') : value;
}

/** A client whose bound string parameters never carry U+0000 (see withoutNul). */
class NulSafeClient extends pg.Client {
  override query(...args: unknown[]): never {
    if (Array.isArray(args[1])) args[1] = args[1].map(withoutNul);
    else if (args[0] && typeof args[0] === 'object' && Array.isArray((args[0] as { values?: unknown[] }).values)) {
      const config = args[0] as { values: unknown[] };
      args[0] = { ...config, values: config.values.map(withoutNul) };
    }
    return (super.query as (...a: unknown[]) => never)(...args);
  }
}

/** JSON for a JSONB parameter: JSONB refuses the \u0000 escape, so U+0000 in any string becomes U+FFFD first. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => withoutNul(v));
}

export function createPool(url: string, readOnly: boolean, extra: pg.PoolConfig = {}): Db {
  const pool = new pg.Pool({
    Client: NulSafeClient,
    connectionString: url,
    max: Number(process.env.DATABASE_POOL_SIZE ?? 10),
    ...extra,
    // A read-only open (builds, reports) gets connections that refuse every write, as the lowdb snapshot does.
    ...(readOnly ? { options: '-c default_transaction_read_only=on' } : {}),
  });
  // An idle connection dropped by the server must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  return pool;
}

/** Runs `work` in one transaction on one connection, committing when it resolves. */
export async function transaction<T>(db: Db, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** Splits a partial change into the fields to set and the fields to remove (undefined values). */
export function changeOf(change: object): { set: Record<string, unknown>; remove: string[] } {
  const set: Record<string, unknown> = {};
  const remove: string[] = [];
  for (const [key, value] of Object.entries(change)) {
    if (value === undefined) remove.push(key);
    else set[key] = value;
  }
  return { set, remove };
}
