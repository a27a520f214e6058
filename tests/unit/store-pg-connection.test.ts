/**
 * The PostgreSQL store's connections on a real cluster, when the server ends one (a restart, a
 * failover, an operator's pg_terminate_backend): the work on it fails as "unavailable", never the process.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createPool, transaction, type Db } from '../../src/store/pg/db.ts';
import { isStoreUnavailable } from '../../src/store/index.ts';
import { databaseFor } from '../helpers/postgres.ts';
import { makeTempDir } from './support.ts';

const pools: Db[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.end();
});

describe('a connection the server ends', () => {
  it('between two statements of a transaction fails the transaction as unavailable, and the pool goes on', async () => {
    const url = await databaseFor(makeTempDir('meridian-pg-connection-'));
    const pool = createPool(url, false);
    const admin = createPool(url, false);
    pools.push(pool, admin);
    const attempt = transaction(pool, async (client) => {
      const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const ended = new Promise((resolve) => client.once('end', resolve));
      await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
      // The server's goodbye arrives while no statement runs: an 'error' event nobody asked for, then the end.
      await ended;
      await client.query('SELECT 1');
    });
    const error = await attempt.then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(isStoreUnavailable(error), String(error)).toBe(true);
    // The broken connection was not given back: the next statement gets a working one.
    expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one).toBe(1);
  });
});
