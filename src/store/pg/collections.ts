/** The PostgreSQL repositories besides articles and people: votes and views, comments, sources, sessions, jobs, limits and meta. */
import type { ArticleCounters, VoteKind } from '../../schemas/article.ts';
import type { Comment, CommentFilter } from '../../schemas/comment.ts';
import type { NewsSource } from '../../schemas/source.ts';
import type { Session } from '../../schemas/auth.ts';
import type { Job } from '../../schemas/misc.ts';
import type {
  CommentRepository,
  CounterRepository,
  JobRepository,
  LimitRepository,
  MetaRepository,
  Page,
  SessionRepository,
  SourceRepository,
  VoteRecord,
} from '../types.ts';
import { changeOf, toJson, transaction, type Db } from './db.ts';

type TallyRow = { article_id: string; likes: string; dislikes: string; views: string };

/** What readers see: counted votes plus the editor's adjustment, never below zero. */
const SHOWN = `article_id, greatest(0, likes + adjust_likes) AS likes, greatest(0, dislikes + adjust_dislikes) AS dislikes, views`;

function countersOf(row: TallyRow | undefined): ArticleCounters {
  return row ? { likes: Number(row.likes), dislikes: Number(row.dislikes), views: Number(row.views) } : { likes: 0, dislikes: 0, views: 0 };
}

/** One vote per (article, visitor) by the votes table's key; tallies move in the same transaction as the vote. */
export class PgCounters implements CounterRepository {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }

  async get(articleId: string) {
    return countersOf((await this.#db.query<TallyRow>(`SELECT ${SHOWN} FROM tallies WHERE article_id = $1`, [articleId])).rows[0]);
  }

  async getMany(articleIds: readonly string[]) {
    const { rows } = await this.#db.query<TallyRow>(`SELECT ${SHOWN} FROM tallies WHERE article_id = ANY($1::text[])`, [[...articleIds]]);
    const found = new Map(rows.map((r) => [r.article_id, r]));
    return new Map(articleIds.map((id) => [id, countersOf(found.get(id))]));
  }

  async visitorVote(articleId: string, visitorId: string) {
    const { rows } = await this.#db.query<{ kind: VoteKind }>('SELECT kind FROM votes WHERE article_id = $1 AND visitor_id = $2', [
      articleId,
      visitorId,
    ]);
    return rows[0]?.kind;
  }

  async vote(articleId: string, visitorId: string, kind: VoteKind) {
    return transaction(this.#db, async (client) => {
      // Inserted: a new vote. Updated: the visitor changed their mind (only two kinds). No row: the same vote again.
      const { rows } = await client.query<{ inserted: boolean }>(
        `INSERT INTO votes (article_id, visitor_id, kind) VALUES ($1, $2, $3)
         ON CONFLICT (article_id, visitor_id) DO UPDATE SET kind = EXCLUDED.kind WHERE votes.kind <> EXCLUDED.kind
         RETURNING (xmax = 0) AS inserted`,
        [articleId, visitorId, kind],
      );
      const changed = rows[0];
      let tally: TallyRow | undefined;
      if (changed) {
        const like = kind === 'like' ? 1 : changed.inserted ? 0 : -1;
        const dislike = kind === 'dislike' ? 1 : changed.inserted ? 0 : -1;
        tally = (
          await client.query<TallyRow>(
            `INSERT INTO tallies AS t (article_id, likes, dislikes) VALUES ($1, $2, $3)
             ON CONFLICT (article_id) DO UPDATE SET likes = t.likes + EXCLUDED.likes, dislikes = t.dislikes + EXCLUDED.dislikes
             RETURNING ${SHOWN}`,
            [articleId, like, dislike],
          )
        ).rows[0];
      } else {
        tally = (await client.query<TallyRow>(`SELECT ${SHOWN} FROM tallies WHERE article_id = $1`, [articleId])).rows[0];
      }
      return { ...countersOf(tally), vote: kind };
    });
  }

  /** One atomic UPDATE: the adjustment becomes whatever makes the shown total move by `amount`, never below zero. */
  async importVotes(votes: readonly VoteRecord[]) {
    if (votes.length === 0) return;
    // As vote() for each in order: a visitor's last vote on an article is the one that stays.
    const last = new Map(votes.map((v) => [`${v.articleId}\u0000${v.visitorId}`, v]));
    const rows = [...last.values()];
    await transaction(this.#db, async (client) => {
      for (let i = 0; i < rows.length; i += 5000)
        await client.query(
          `INSERT INTO votes (article_id, visitor_id, kind)
           SELECT v ->> 'articleId', v ->> 'visitorId', v ->> 'kind' FROM jsonb_array_elements($1::jsonb) v
           ON CONFLICT (article_id, visitor_id) DO UPDATE SET kind = EXCLUDED.kind`,
          [toJson(rows.slice(i, i + 5000))],
        );
      // The counted tallies of the articles voted on, from their votes (adjustments and views stay).
      await client.query(
        `INSERT INTO tallies AS t (article_id, likes, dislikes)
         SELECT article_id, count(*) FILTER (WHERE kind = 'like'), count(*) FILTER (WHERE kind = 'dislike')
         FROM votes WHERE article_id = ANY($1::text[]) GROUP BY article_id
         ON CONFLICT (article_id) DO UPDATE SET likes = EXCLUDED.likes, dislikes = EXCLUDED.dislikes`,
        [[...new Set(rows.map((v) => v.articleId))]],
      );
    });
  }

  async adjust(articleId: string, kind: VoteKind, amount: number) {
    const [counted, adjustment] = kind === 'like' ? ['likes', 'adjust_likes'] : ['dislikes', 'adjust_dislikes'];
    const { rows } = await this.#db.query<TallyRow>(
      `INSERT INTO tallies AS t (article_id, ${adjustment}) VALUES ($1, greatest(0, $2::bigint))
       ON CONFLICT (article_id) DO UPDATE SET ${adjustment} = greatest(0, greatest(0, t.${counted} + t.${adjustment}) + $2::bigint) - t.${counted}
       RETURNING ${SHOWN}`,
      [articleId, amount],
    );
    return countersOf(rows[0]);
  }

  async addViews(views: ReadonlyMap<string, number>) {
    if (views.size === 0) return;
    // In id order, so two servers' flushes take the rows' locks in the same order.
    const ids = [...views.keys()].sort();
    await this.#db.query(
      `INSERT INTO tallies AS t (article_id, views) SELECT * FROM unnest($1::text[], $2::bigint[])
       ON CONFLICT (article_id) DO UPDATE SET views = t.views + EXCLUDED.views`,
      [ids, ids.map((id) => views.get(id)!)],
    );
  }

  async incrementViews(articleId: string) {
    await this.#db.query(
      'INSERT INTO tallies AS t (article_id, views) VALUES ($1, 1) ON CONFLICT (article_id) DO UPDATE SET views = t.views + 1',
      [articleId],
    );
  }

  async deleteArticle(articleId: string) {
    await transaction(this.#db, async (client) => {
      await client.query('DELETE FROM votes WHERE article_id = $1', [articleId]);
      await client.query('DELETE FROM tallies WHERE article_id = $1', [articleId]);
    });
  }
}

/** A WHERE clause for a comment filter (the same matching as the lowdb store: a case-insensitive substring). */
function commentWhere(filter: CommentFilter, params: unknown[]): string {
  const parts: string[] = [];
  const add = (value: unknown) => `$${params.push(value)}`;
  if (filter.articleId) parts.push(`article_id = ${add(filter.articleId)}`);
  if (filter.status) parts.push(`status = ${add(filter.status)}`);
  if (filter.search) {
    parts.push(
      `strpos(lower(concat_ws(E'\\n', doc ->> 'authorName', doc ->> 'authorEmail', doc ->> 'content')), ${add(filter.search.toLowerCase())}) > 0`,
    );
  }
  return parts.length ? `WHERE ${parts.join(' AND ')}` : '';
}

export class PgComments implements CommentRepository {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }
  async get(id: string) {
    return (await this.#db.query<{ doc: Comment }>('SELECT doc FROM comments WHERE id = $1', [id])).rows[0]?.doc;
  }
  async list(filter: CommentFilter, page: Page) {
    const params: unknown[] = [];
    const where = commentWhere(filter, params);
    const sql = `SELECT doc FROM comments ${where} ORDER BY created_at DESC, id DESC OFFSET $${params.push(page.offset)} LIMIT $${params.push(page.limit)}`;
    return (await this.#db.query<{ doc: Comment }>(sql, params)).rows.map((r) => r.doc);
  }
  async count(filter: CommentFilter) {
    const params: unknown[] = [];
    return (await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM comments ${commentWhere(filter, params)}`, params)).rows[0]!
      .n;
  }
  async insert(comment: Comment) {
    await this.#db.query(
      `INSERT INTO comments (id, article_id, status, created_at, doc) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (id) DO UPDATE SET article_id = EXCLUDED.article_id, status = EXCLUDED.status, created_at = EXCLUDED.created_at, doc = EXCLUDED.doc`,
      [comment.id, comment.articleId, comment.status, comment.createdAt, toJson(comment)],
    );
  }
  async setStatus(id: string, status: Comment['status']) {
    const { rows } = await this.#db.query<{ doc: Comment }>(
      `UPDATE comments SET status = $2, doc = jsonb_set(doc, '{status}', to_jsonb($2::text)) WHERE id = $1 RETURNING doc`,
      [id, status],
    );
    return rows[0]?.doc;
  }
  async delete(id: string) {
    return ((await this.#db.query('DELETE FROM comments WHERE id = $1', [id])).rowCount ?? 0) > 0;
  }
  async deleteForArticle(articleId: string) {
    await this.#db.query('DELETE FROM comments WHERE article_id = $1', [articleId]);
  }
}

export class PgSources implements SourceRepository {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }
  async get(id: string) {
    return (await this.#db.query<{ doc: NewsSource }>('SELECT doc FROM sources WHERE id = $1', [id])).rows[0]?.doc;
  }
  async list() {
    return (await this.#db.query<{ doc: NewsSource }>('SELECT doc FROM sources ORDER BY seq')).rows.map((r) => r.doc);
  }
  async insert(source: NewsSource) {
    await this.#db.query('INSERT INTO sources (id, doc) VALUES ($1, $2)', [source.id, toJson(source)]);
  }
  /** Merges the change in one UPDATE: defined fields set, undefined ones removed. */
  async update(id: string, change: Partial<Omit<NewsSource, 'id'>>) {
    const { set, remove } = changeOf(change);
    const { rows } = await this.#db.query<{ doc: NewsSource }>(
      'UPDATE sources SET doc = (doc || $2::jsonb) - $3::text[] WHERE id = $1 RETURNING doc',
      [id, toJson(set), remove],
    );
    return rows[0]?.doc;
  }
  async delete(id: string) {
    return ((await this.#db.query('DELETE FROM sources WHERE id = $1', [id])).rowCount ?? 0) > 0;
  }
}

/** Sessions in a table: a restart or a second server keeps everyone signed in. */
export class PgSessions implements SessionRepository {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }
  async get(id: string) {
    return (await this.#db.query<{ doc: Session }>('SELECT doc FROM sessions WHERE id = $1', [id])).rows[0]?.doc;
  }
  async insert(session: Session) {
    await this.#db.query(
      `INSERT INTO sessions (id, user_id, expires_at, doc) VALUES ($1, $2, $3, $4)
       ON CONFLICT (id) DO UPDATE SET user_id = EXCLUDED.user_id, expires_at = EXCLUDED.expires_at, doc = EXCLUDED.doc`,
      [session.id, session.userId, session.expiresAt, toJson(session)],
    );
  }
  async setExpiry(id: string, expiresAt: string) {
    await this.#db.query(`UPDATE sessions SET expires_at = $2, doc = jsonb_set(doc, '{expiresAt}', to_jsonb($2::text)) WHERE id = $1`, [
      id,
      expiresAt,
    ]);
  }
  async delete(id: string) {
    await this.#db.query('DELETE FROM sessions WHERE id = $1', [id]);
  }
  async deleteForUser(userId: string) {
    await this.#db.query('DELETE FROM sessions WHERE user_id = $1', [userId]);
  }
  async deleteExpired(now: string) {
    return (await this.#db.query('DELETE FROM sessions WHERE expires_at <= $1', [now])).rowCount ?? 0;
  }
}

type JobRow = { id: string; path: string; created_at: string; queued_at: string; attempts: number; last_error: string | null };

function jobOf(row: JobRow): Job {
  const job: Job = { id: String(row.id), path: row.path, createdAt: row.created_at, queuedAt: row.queued_at, attempts: row.attempts };
  if (row.last_error !== null) job.lastError = row.last_error;
  return job;
}

/** The regeneration queue: one row per path (the unique key coalesces), ordered by `ord`. */
export class PgJobs implements JobRepository {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }
  async enqueue(paths: readonly string[], now: string) {
    const unique = [...new Set(paths)];
    if (unique.length === 0) return 0;
    const { rows } = await this.#db.query<{ inserted: boolean }>(
      // Numbered in the caller's order (the queue order), inserted in path order: two servers
      // enqueueing overlapping paths lock them in the same order, so they cannot deadlock.
      `INSERT INTO jobs (id, path, created_at, queued_at, ord)
       SELECT id, path, $2, $2, id FROM (
         SELECT nextval('jobs_seq') AS id, path FROM (SELECT path, n FROM unnest($1::text[]) WITH ORDINALITY AS p(path, n) ORDER BY n) AS given
       ) AS numbered ORDER BY path
       ON CONFLICT (path) DO UPDATE SET queued_at = EXCLUDED.queued_at
       RETURNING (xmax = 0) AS inserted`,
      [unique, now],
    );
    return rows.filter((r) => r.inserted).length;
  }
  async list(limit: number) {
    const { rows } = await this.#db.query<JobRow>(
      'SELECT id::text, path, created_at, queued_at, attempts, last_error FROM jobs ORDER BY ord LIMIT $1',
      [limit],
    );
    return rows.map(jobOf);
  }
  /** Removes the job unless it was re-queued after `startedAt` (then it stays, its attempts reset). */
  async complete(id: string, startedAt: string) {
    if (!/^\d+$/.test(id)) return;
    const removed = await this.#db.query('DELETE FROM jobs WHERE id = $1 AND queued_at <= $2', [id, startedAt]);
    if (!removed.rowCount)
      await this.#db.query('UPDATE jobs SET attempts = 0, claimed_by = NULL, lease_until = NULL WHERE id = $1 AND queued_at > $2', [
        id,
        startedAt,
      ]);
  }
  /** Counts the attempt and moves the job to the back, so one broken page does not block the others. */
  async fail(id: string, error: string) {
    if (!/^\d+$/.test(id)) return;
    await this.#db.query(
      `UPDATE jobs SET attempts = attempts + 1, last_error = $2, ord = nextval('jobs_seq'), claimed_by = NULL, lease_until = NULL WHERE id = $1`,
      [id, error],
    );
  }
  async get(id: string) {
    if (!/^\d+$/.test(id)) return undefined;
    const { rows } = await this.#db.query<JobRow>(
      'SELECT id::text, path, created_at, queued_at, attempts, last_error FROM jobs WHERE id = $1',
      [id],
    );
    return rows[0] && jobOf(rows[0]);
  }
  /** A scan of the queue (which drains; no index on attempts): read by the dashboard every few seconds at most. */
  async failed(limit: number) {
    const { rows } = await this.#db.query<JobRow>(
      'SELECT id::text, path, created_at, queued_at, attempts, last_error FROM jobs WHERE attempts > 0 ORDER BY ord LIMIT $1',
      [limit],
    );
    return rows.map(jobOf);
  }
  async size() {
    return (await this.#db.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs')).rows[0]!.n;
  }
  /**
   * One conditional UPDATE: free, already ours, or a lease run out (its server was killed). The row
   * lock makes two servers asking at once queue up, and the second sees the first one's lease. The
   * lease is timed by the database's clock: a lease of a few seconds must not depend on every
   * server's clock agreeing to the second.
   */
  async claim(id: string, owner: string, leaseUntil: number, now: number) {
    if (!/^\d+$/.test(id)) return false;
    const { rowCount } = await this.#db.query(
      `WITH clock AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now)
       UPDATE jobs SET claimed_by = $2, lease_until = clock.now + $3::bigint FROM clock
       WHERE id = $1 AND (claimed_by IS NULL OR claimed_by = $2 OR lease_until <= clock.now)`,
      [id, owner, Math.max(0, leaseUntil - now)],
    );
    return rowCount === 1;
  }
}

/** Rate-limit windows and throttles in a table: shared by every server and kept across restarts. */
export class PgLimits implements LimitRepository {
  readonly #db: Db;
  #lastSweep = 0;
  constructor(db: Db) {
    this.#db = db;
  }

  /** Drops expired entries at most once a minute per process, off the request's path. */
  #sweep(now: number): void {
    if (now - this.#lastSweep < 60_000) return;
    this.#lastSweep = now;
    this.#db.query('DELETE FROM limits WHERE expires_at <= $1', [now]).catch(() => {});
  }

  /** One atomic upsert: a new or expired window starts at 1, an open one counts up. */
  async hit(key: string, windowMs: number, now: number) {
    this.#sweep(now);
    const { rows } = await this.#db.query<{ count: string; expires_at: string }>(
      `INSERT INTO limits AS l (key, value, expires_at) VALUES ($1, '1', $2::bigint + $3::bigint)
       ON CONFLICT (key) DO UPDATE SET
         value = CASE WHEN l.expires_at <= $2::bigint THEN '1'::jsonb ELSE to_jsonb((l.value #>> '{}')::bigint + 1) END,
         expires_at = CASE WHEN l.expires_at <= $2::bigint THEN $2::bigint + $3::bigint ELSE l.expires_at END
       RETURNING value #>> '{}' AS count, expires_at`,
      [key, now, windowMs],
    );
    return { count: Number(rows[0]!.count), resetAt: Number(rows[0]!.expires_at) };
  }
  async get<T>(key: string, now: number) {
    const { rows } = await this.#db.query<{ value: T }>('SELECT value FROM limits WHERE key = $1 AND expires_at > $2', [key, now]);
    return rows[0]?.value;
  }
  async set<T>(key: string, value: T, expiresAt: number) {
    await this.#db.query(
      'INSERT INTO limits (key, value, expires_at) VALUES ($1, $2, $3) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at',
      [key, toJson(value), expiresAt],
    );
  }
  async delete(key: string) {
    await this.#db.query('DELETE FROM limits WHERE key = $1', [key]);
  }
  /** One transaction holding the key's row lock (a placeholder row is inserted first, so there is always one to lock). */
  async update<T>(key: string, now: number, change: (current: T | undefined) => { value: T; expiresAt: number }) {
    return transaction(this.#db, async (client) => {
      await client.query(`INSERT INTO limits (key, value, expires_at) VALUES ($1, 'null', 0) ON CONFLICT (key) DO NOTHING`, [key]);
      const { rows } = await client.query<{ value: T; expires_at: string }>(
        'SELECT value, expires_at FROM limits WHERE key = $1 FOR UPDATE',
        [key],
      );
      const row = rows[0]!;
      const next = change(Number(row.expires_at) > now ? row.value : undefined);
      await client.query('UPDATE limits SET value = $2, expires_at = $3 WHERE key = $1', [key, toJson(next.value), next.expiresAt]);
      return next.value;
    });
  }
}

export class PgMeta implements MetaRepository {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }
  async get<T>(key: string) {
    return (await this.#db.query<{ value: T }>('SELECT value FROM meta WHERE key = $1', [key])).rows[0]?.value;
  }
  async set<T>(key: string, value: T) {
    await this.#db.query('INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value', [
      key,
      toJson(value),
    ]);
  }
  async setIfAbsent<T>(key: string, value: T) {
    await this.#db.query('INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [key, toJson(value)]);
    return (await this.get<T>(key)) as T;
  }
}
