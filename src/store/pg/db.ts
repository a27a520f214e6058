/** The connection pool and the small helpers every PostgreSQL repository shares. */
import pg from 'pg';
import { isStoreUnavailable, StoreUnavailableError } from '../types.ts';

export type Db = pg.Pool;

/** What a request that met a database outage is told, and how soon it may try again. */
export const DATABASE_UNAVAILABLE = 'The database is unavailable; try again in a few seconds.';
export const DATABASE_RETRY_AFTER_S = 5;

/**
 * How long a writer's pool (a server, a script that writes) waits for a connection, new or free,
 * before the database counts as unavailable: a database that is down refuses at once, one that
 * hangs (frozen, unreachable) must not hold a request.
 */
export const CONNECT_TIMEOUT_MS = 3000;

/**
 * How long a query may wait for its answer, asked as each query starts (undefined: no limit). The
 * server answers 7 s inside a request and none for background work, whose archive-wide listings may
 * rightly take longer on a large archive.
 */
export type QueryTimeout = () => number | undefined;

/** The store's own options, beside node-postgres's, on the pool and on each client it makes. */
type LimitOptions = { queryTimeoutMs?: QueryTimeout };

/** A query's arguments with the query timeout that applies now, unless it has one (or is a Query object). */
function withQueryTimeout(args: unknown[], timeout: QueryTimeout | undefined): void {
  const ms = timeout?.();
  if (ms === undefined || ms <= 0) return;
  if (typeof args[0] === 'string') args[0] = { text: args[0], query_timeout: ms };
  else if (args[0] && typeof args[0] === 'object') {
    const config = args[0] as { submit?: unknown; query_timeout?: unknown };
    if (typeof config.submit !== 'function' && config.query_timeout === undefined) args[0] = { ...config, query_timeout: ms };
  }
}

/** Socket errors of a connection that failed or broke. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENOENT',
]);
/** SQLSTATEs of a server stopping or starting (57P0x), out of connections (53300), or cancelling a statement (57014). */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '57P05', '53300', '57014']);
/** node-postgres and pg-pool say these in words only. */
const CLIENT_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|timeout expired|Query read timeout|Client has encountered a connection error|Client was closed and is not queryable|Cannot use a pool after calling end on the pool)/;

/** Whether an error means the database could not be reached or did not answer (as opposed to refusing the statement). */
export function isConnectionFailure(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 4; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && (SOCKET_CODES.has(code) || SERVER_CODES.has(code) || code.startsWith('08'))) return true;
    if (CLIENT_MESSAGES.test(current.message)) return true;
    // Several addresses tried (localhost as ::1 and 127.0.0.1): Node reports them together.
    if (current instanceof AggregateError && current.errors.some((inner) => isConnectionFailure(inner))) return true;
  }
  return false;
}

/** The error a caller sees: a connection failure becomes StoreUnavailableError (503 at the edge); anything else as it was. */
export function storeErrorOf(error: unknown): unknown {
  if (isStoreUnavailable(error) || !isConnectionFailure(error)) return error;
  return new StoreUnavailableError(DATABASE_UNAVAILABLE, { retryAfterS: DATABASE_RETRY_AFTER_S, cause: error });
}

const rethrowAsStoreError = (error: unknown): never => {
  throw storeErrorOf(error);
};

/**
 * PostgreSQL text cannot hold U+0000: a string with one would fail the whole statement (a 500 for
 * a lookup by a hostile id). It becomes U+FFFD, so such a lookup finds nothing, as it would in lowdb.
 */
function withoutNul(value: unknown): unknown {
  return typeof value === 'string' && value.includes('\u0000') ? value.replaceAll('\u0000', '\uFFFD') : value;
}

/**
 * A client whose bound string parameters never carry U+0000 (see withoutNul), and whose promised
 * queries (a transaction's) fail with StoreUnavailableError when the connection does.
 */
class NulSafeClient extends pg.Client {
  readonly #queryTimeout: QueryTimeout | undefined;
  // pg-pool hands every client the pool's options, the store's own among them.
  constructor(config: pg.ClientConfig & LimitOptions = {}) {
    super(config);
    this.#queryTimeout = config.queryTimeoutMs;
  }
  override query(...args: unknown[]): never {
    withQueryTimeout(args, this.#queryTimeout);
    if (Array.isArray(args[1])) args[1] = args[1].map(withoutNul);
    else if (args[0] && typeof args[0] === 'object' && Array.isArray((args[0] as { values?: unknown[] }).values)) {
      const config = args[0] as { values: unknown[] };
      args[0] = { ...config, values: config.values.map(withoutNul) };
    }
    const result = (super.query as (...a: unknown[]) => unknown)(...args);
    return (result instanceof Promise ? result.catch(rethrowAsStoreError) : result) as never;
  }
}

/**
 * The one place connection failures are named: every pool.query and pool.connect of the store goes
 * through here (pg-pool's own callback calls pass by untouched), so a repository never checks.
 */
class StorePool extends pg.Pool {
  override query(...args: unknown[]): never {
    // Read here, in the caller's context (a request's): pg-pool runs the client's query from its own callbacks.
    withQueryTimeout(args, (this.options as LimitOptions).queryTimeoutMs);
    const result = (super.query as (...a: unknown[]) => unknown)(...args);
    return (result instanceof Promise ? result.catch(rethrowAsStoreError) : result) as never;
  }
  override connect(...args: unknown[]): never {
    const result = (super.connect as (...a: unknown[]) => unknown)(...args);
    return (result instanceof Promise ? result.catch(rethrowAsStoreError) : result) as never;
  }
}

/** JSON for a JSONB parameter: JSONB refuses the \u0000 escape, so U+0000 in any string becomes U+FFFD first. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => withoutNul(v));
}

export function createPool(url: string, readOnly: boolean, extra: pg.PoolConfig & LimitOptions = {}): Db {
  const pool = new StorePool({
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
  // A checked-out client has no listener of the pool's: a connection the server ends between two
  // statements (a restart) would be an uncaught 'error' that stops the process. Heard here, it makes
  // the next statement fail, which is answered as the database being unavailable.
  const ignore = () => {};
  client.on('error', ignore);
  let result: T;
  try {
    await client.query('BEGIN');
    result = await work(client);
    await client.query('COMMIT');
  } catch (error) {
    // A connection that broke (or timed out mid-statement) is not given back to the pool: the next one is new.
    const broken = isConnectionFailure(error);
    if (!broken) await client.query('ROLLBACK').catch(() => {});
    client.off('error', ignore);
    client.release(broken ? (error as Error) : undefined);
    throw error;
  }
  client.off('error', ignore);
  client.release();
  return result;
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
