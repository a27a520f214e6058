/** Rendered pages shared by the servers on one database: the bytes in a table, a NOTIFY per change, a LISTEN connection per server. */
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { RenderedPageNote, RenderedPageRepository } from '../types.ts';
import { CONNECT_TIMEOUT_MS, type Db } from './db.ts';

const CHANNEL = 'meridian_rendered_pages';
/**
 * How long a listener waits before connecting again after losing its connection: doubling from the
 * first to the last while the database stays away, so an outage costs a few attempts a minute and
 * a database that comes back is heard again within 2 s.
 */
const RECONNECT_MS = [250, 500, 1000, 2000] as const;

type PageRow = { path: string; body: Buffer | null; seq: string; origin: string };

export class PgRenderedPages implements RenderedPageRepository {
  readonly shared = true;
  readonly #db: Db;
  readonly #url: string;
  constructor(db: Db, url: string) {
    this.#db = db;
    this.#url = url;
  }

  /** Upsert and NOTIFY in one statement's transaction: listeners hear of it only once the bytes are committed. */
  async put(path: string, body: Uint8Array | undefined, origin: string) {
    const bytes = body === undefined ? null : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    const sha256 = bytes && createHash('sha256').update(bytes).digest('hex');
    const { rows } = await this.#db.query<{ seq: string }>(
      `WITH saved AS (
         INSERT INTO rendered_pages (path, body, sha256, seq, origin) VALUES ($1, $2, $3, nextval('rendered_pages_seq'), $4)
         ON CONFLICT (path) DO UPDATE SET body = EXCLUDED.body, sha256 = EXCLUDED.sha256, seq = EXCLUDED.seq, origin = EXCLUDED.origin, stored_at = now()
         RETURNING seq
       )
       SELECT seq::text, pg_notify('${CHANNEL}', json_build_object('path', $1::text, 'seq', seq, 'origin', $4::text)::text) FROM saved`,
      [path, bytes, sha256, origin],
    );
    return Number(rows[0]!.seq);
  }

  async get(path: string) {
    const { rows } = await this.#db.query<PageRow>('SELECT path, body, seq::text, origin FROM rendered_pages WHERE path = $1', [path]);
    const row = rows[0];
    if (!row) return undefined;
    return { path: row.path, body: row.body === null ? undefined : new Uint8Array(row.body), seq: Number(row.seq), origin: row.origin };
  }

  /** Read through the index on seq: a server that synced before asks only for what changed since. */
  async list(afterSeq = 0) {
    const { rows } = await this.#db.query<{ path: string; seq: string; sha256: string | null }>(
      'SELECT path, seq::text, sha256 FROM rendered_pages WHERE seq > $1 ORDER BY seq',
      [afterSeq],
    );
    return rows.map((r) => ({ path: r.path, seq: Number(r.seq), sha256: r.sha256 ?? undefined }));
  }

  async pruneRemovals(storedBefore: number) {
    const { rowCount } = await this.#db.query('DELETE FROM rendered_pages WHERE body IS NULL AND stored_at < to_timestamp($1 / 1000.0)', [
      storedBefore,
    ]);
    return rowCount ?? 0;
  }

  /** A connection of its own (LISTEN holds it), connected again whenever it drops, with `resync` after each return. */
  async listen(listener: (note: RenderedPageNote) => void, resync?: () => void) {
    let stopped = false;
    let client: pg.Client | undefined;
    let retry: NodeJS.Timeout | undefined;
    /** Attempts since the connection was last up. */
    let failures = 0;
    const connect = async (again: boolean): Promise<void> => {
      // An attempt on a database that hangs is given up, as the pool's are; TCP keepalive notices a link that died silently.
      const next = new pg.Client({
        connectionString: this.#url,
        connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
        keepAlive: true,
      });
      next.on('notification', (message) => {
        if (message.channel !== CHANNEL || !message.payload) return;
        try {
          const note = JSON.parse(message.payload) as RenderedPageNote;
          listener({ path: String(note.path), seq: Number(note.seq), origin: String(note.origin) });
        } catch {
          // Not ours to read: ignore it rather than stop listening.
        }
      });
      const lost = () => {
        if (stopped || client !== next) return;
        client = undefined;
        next.end().catch(() => {});
        const delay = RECONNECT_MS[Math.min(failures++, RECONNECT_MS.length - 1)];
        retry = setTimeout(() => void connect(true).catch(() => lost()), delay);
      };
      next.on('error', lost);
      next.on('end', lost);
      client = next;
      try {
        await next.connect();
        await next.query(`LISTEN ${CHANNEL}`);
      } catch (error) {
        if (!again) {
          client = undefined;
          await next.end().catch(() => {});
          throw error;
        }
        lost();
        return;
      }
      failures = 0;
      if (again) resync?.();
    };
    await connect(false);
    return async () => {
      stopped = true;
      clearTimeout(retry);
      const current = client;
      client = undefined;
      await current?.end().catch(() => {});
    };
  }
}
