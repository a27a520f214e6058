/** The connection pool and the small helpers every PostgreSQL repository shares. */
import pg from 'pg';

export type Db = pg.Pool;

export function createPool(url: string, readOnly: boolean): Db {
  const pool = new pg.Pool({
    connectionString: url,
    max: Number(process.env.DATABASE_POOL_SIZE ?? 10),
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
