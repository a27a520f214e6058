/** The PostgreSQL repositories of people and their records: subscribers, the briefing's runs and send log, users and the audit log. */
import type { BriefingRun, Delivery, Subscriber, SubscriberCounts, SubscriberFilter } from '../../schemas/newsletter.ts';
import type { User } from '../../schemas/auth.ts';
import { auditEntrySchema, type AuditEntry } from '../../schemas/audit.ts';
import type { AuditRepository, BriefingRepository, Page, SubscriberListRepository, UserDirectoryRepository } from '../types.ts';
import { changeOf, toJson, type Db } from './db.ts';
import { hashToken, isSameSecret } from '../../security/secrets.ts';

/** subscriberStatus() in SQL: unsubscribed, else pending (a confirmation outstanding), else confirmed. */
const STATUS = `CASE WHEN doc ? 'unsubscribedAt' THEN 'unsubscribed'
  WHEN doc ? 'confirmTokenHash' AND NOT doc ? 'confirmedAt' THEN 'pending' ELSE 'confirmed' END`;

type DocRow<T> = { doc: T };

/** Subscribers by id, with the e-mail unique and tokens looked up by their SHA-256 (as the lowdb store does). */
export class PgSubscribers implements SubscriberListRepository {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }

  async #one(sql: string, params: unknown[]): Promise<Subscriber | undefined> {
    return (await this.#db.query<DocRow<Subscriber>>(sql, params)).rows[0]?.doc;
  }

  async getByEmail(email: string) {
    return this.#one('SELECT doc FROM subscribers WHERE email = $1', [email]);
  }

  async getByToken(token: string) {
    const found = await this.#one('SELECT doc FROM subscribers WHERE token_hash = $1', [hashToken(token)]);
    return found && isSameSecret(found.token, token) ? found : undefined;
  }

  async get(id: string) {
    return this.#one('SELECT doc FROM subscribers WHERE id = $1', [id]);
  }

  async getByConfirmTokenHash(hash: string) {
    const found = await this.#one(`SELECT doc FROM subscribers WHERE doc ->> 'confirmTokenHash' = $1`, [hash]);
    return found?.confirmTokenHash && isSameSecret(found.confirmTokenHash, hash) ? found : undefined;
  }

  /** Inserts, or re-activates the subscription with that e-mail (keeping its id and token), in one statement. */
  async upsert(subscriber: Subscriber) {
    const { rows } = await this.#db.query<DocRow<Subscriber>>(
      `INSERT INTO subscribers AS s (id, email, token_hash, created_at, doc) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (email) DO UPDATE SET doc = s.doc - 'unsubscribedAt' RETURNING doc`,
      [subscriber.id, subscriber.email, hashToken(subscriber.token), subscriber.createdAt, toJson(subscriber)],
    );
    return rows[0]!.doc;
  }

  async update(id: string, change: Partial<Omit<Subscriber, 'id' | 'email'>>) {
    const { set, remove } = changeOf(change);
    const { rows } = await this.#db.query<DocRow<Subscriber>>(
      `UPDATE subscribers SET doc = (doc || $2::jsonb) - $3::text[], token_hash = coalesce($4, token_hash), created_at = coalesce($5, created_at)
       WHERE id = $1 RETURNING doc`,
      [
        id,
        toJson(set),
        remove,
        typeof set.token === 'string' ? hashToken(set.token) : null,
        typeof set.createdAt === 'string' ? set.createdAt : null,
      ],
    );
    return rows[0]?.doc;
  }

  async unsubscribe(token: string, at: string) {
    const found = await this.getByToken(token);
    if (!found) return undefined;
    // Only the first unsubscription is recorded; a repeated click answers the stored date.
    const { rows } = await this.#db.query<DocRow<Subscriber>>(
      `UPDATE subscribers SET doc = CASE WHEN doc ? 'unsubscribedAt' THEN doc ELSE jsonb_set(doc, '{unsubscribedAt}', to_jsonb($2::text)) END WHERE id = $1 RETURNING doc`,
      [found.id, at],
    );
    return rows[0]?.doc;
  }

  async count() {
    return (await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM subscribers WHERE NOT doc ? 'unsubscribedAt'`)).rows[0]!.n;
  }

  async listFiltered(filter: SubscriberFilter, page: Page) {
    const params: unknown[] = [];
    const parts: string[] = [];
    if (filter.q) parts.push(`strpos(email, $${params.push(filter.q.toLowerCase())}) > 0`);
    if (filter.status) parts.push(`${STATUS} = $${params.push(filter.status)}`);
    const where = parts.length ? `WHERE ${parts.join(' AND ')}` : '';
    const sql = `SELECT doc, count(*) OVER ()::int AS total FROM subscribers ${where} ORDER BY created_at DESC, seq
      OFFSET $${params.push(page.offset)} LIMIT $${params.push(page.limit)}`;
    const { rows } = await this.#db.query<DocRow<Subscriber> & { total: number }>(sql, params);
    if (rows.length > 0 || (page.offset === 0 && page.limit > 0)) return { items: rows.map((r) => r.doc), total: rows[0]?.total ?? 0 };
    // An empty page (past the end, or a limit of 0) has no rows to carry the total: count it.
    const counted = await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM subscribers ${where}`, params.slice(0, -2));
    return { items: [], total: counted.rows[0]!.n };
  }

  async countByStatus() {
    const { rows } = await this.#db.query<{ status: keyof SubscriberCounts; n: number }>(
      `SELECT ${STATUS} AS status, count(*)::int AS n FROM subscribers GROUP BY 1`,
    );
    const counts: SubscriberCounts = { confirmed: 0, pending: 0, unsubscribed: 0 };
    for (const { status, n } of rows) counts[status] = n;
    return counts;
  }

  async listConfirmed() {
    const { rows } = await this.#db.query<DocRow<Subscriber>>(
      `SELECT doc FROM subscribers WHERE ${STATUS} = 'confirmed' ORDER BY created_at, seq`,
    );
    return rows.map((r) => r.doc);
  }

  async delete(id: string) {
    return ((await this.#db.query('DELETE FROM subscribers WHERE id = $1', [id])).rowCount ?? 0) > 0;
  }
}

/** Run ids are names in the lowdb layout (file names): the same rule here, so data moves between stores. */
const RUN_ID = /^[A-Za-z0-9_-]{1,80}$/;

function checkRunId(runId: string): void {
  if (!RUN_ID.test(runId)) throw new Error(`Invalid briefing run id: ${runId}`);
}

/** Briefing runs (in start order) and each run's send log, one row per recipient (the latest state wins). */
export class PgBriefings implements BriefingRepository {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }
  async runsFor(date: string) {
    return (await this.#db.query<DocRow<BriefingRun>>('SELECT doc FROM briefing_runs WHERE date = $1 ORDER BY seq', [date])).rows.map(
      (r) => r.doc,
    );
  }
  async latest() {
    return (await this.#db.query<DocRow<BriefingRun>>('SELECT doc FROM briefing_runs ORDER BY seq DESC LIMIT 1')).rows[0]?.doc;
  }
  async saveRun(run: BriefingRun) {
    await this.#db.query(
      'INSERT INTO briefing_runs (id, date, doc) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET date = EXCLUDED.date, doc = EXCLUDED.doc',
      [run.id, run.date, toJson(run)],
    );
  }
  async startRun(run: BriefingRun) {
    const { rowCount } = await this.#db.query('INSERT INTO briefing_runs (id, date, doc) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING', [
      run.id,
      run.date,
      toJson(run),
    ]);
    return rowCount === 1;
  }
  /** One upsert: a new row, or a failure marked for retry taken over; any other state stays and the claim is refused. */
  async claimDelivery(runId: string, subscriberId: string, at: string) {
    checkRunId(runId);
    const { rowCount } = await this.#db.query(
      `INSERT INTO briefing_deliveries AS d (run_id, subscriber_id, doc) VALUES ($1, $2, $3)
       ON CONFLICT (run_id, subscriber_id) DO UPDATE SET doc = EXCLUDED.doc WHERE d.doc ->> 'state' = 'failed' AND d.doc -> 'retry' = 'true'::jsonb`,
      [runId, subscriberId, toJson({ subscriberId, state: 'attempting', at })],
    );
    return rowCount === 1;
  }
  async deliveries(runId: string) {
    checkRunId(runId);
    const { rows } = await this.#db.query<DocRow<Delivery>>('SELECT doc FROM briefing_deliveries WHERE run_id = $1', [runId]);
    return new Map(rows.map((r) => [r.doc.subscriberId, r.doc]));
  }
  /** Committed (and so durable) when it resolves: an `attempting` state is recorded before the mail goes out. */
  async recordDeliveries(runId: string, deliveries: readonly Delivery[]) {
    checkRunId(runId);
    if (deliveries.length === 0) return;
    // The last state of a subscriber in the batch wins, as in the append-only log.
    const latest = new Map(deliveries.map((d) => [d.subscriberId, d]));
    await this.#db.query(
      `INSERT INTO briefing_deliveries (run_id, subscriber_id, doc) SELECT $1, d ->> 'subscriberId', d FROM jsonb_array_elements($2::jsonb) AS d
       ON CONFLICT (run_id, subscriber_id) DO UPDATE SET doc = EXCLUDED.doc`,
      [runId, toJson([...latest.values()])],
    );
  }
}

/** Users with the username unique case-insensitively; listed in creation order. */
export class PgUsers implements UserDirectoryRepository {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }
  async get(id: string) {
    return (await this.#db.query<DocRow<User>>('SELECT doc FROM users WHERE id = $1', [id])).rows[0]?.doc;
  }
  async getByUsername(username: string) {
    return (await this.#db.query<DocRow<User>>('SELECT doc FROM users WHERE username_key = $1', [username.toLowerCase()])).rows[0]?.doc;
  }
  async count() {
    return (await this.#db.query<{ n: number }>('SELECT count(*)::int AS n FROM users')).rows[0]!.n;
  }
  /** Inserts, or replaces the user with the same username, keeping that user's id. */
  async upsert(user: User) {
    const { rows } = await this.#db.query<DocRow<User>>(
      `INSERT INTO users AS u (id, username_key, doc) VALUES ($1, $2, $3)
       ON CONFLICT (username_key) DO UPDATE SET doc = EXCLUDED.doc || jsonb_build_object('id', u.id) RETURNING doc`,
      [user.id, user.username.toLowerCase(), toJson(user)],
    );
    return rows[0]!.doc;
  }
  async list() {
    return (await this.#db.query<DocRow<User>>('SELECT doc FROM users ORDER BY seq')).rows.map((r) => r.doc);
  }
  async update(id: string, change: Partial<Omit<User, 'id' | 'username'>>) {
    const { set, remove } = changeOf(change);
    const { rows } = await this.#db.query<DocRow<User>>(
      'UPDATE users SET doc = (doc || $2::jsonb) - $3::text[] WHERE id = $1 RETURNING doc',
      [id, toJson(set), remove],
    );
    return rows[0]?.doc;
  }
  async delete(id: string) {
    return ((await this.#db.query('DELETE FROM users WHERE id = $1', [id])).rowCount ?? 0) > 0;
  }
}

/** The audit log: append-only rows, read newest first. */
export class PgAudit implements AuditRepository {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }
  async append(entry: AuditEntry) {
    const parsed = auditEntrySchema.parse(entry);
    await this.#db.query('INSERT INTO audit (at, doc) VALUES ($1, $2)', [parsed.at, toJson(parsed)]);
  }
  async list(page: Page) {
    const [items, total] = await Promise.all([
      this.#db.query<DocRow<AuditEntry>>('SELECT doc FROM audit ORDER BY seq DESC OFFSET $1 LIMIT $2', [page.offset, page.limit]),
      this.#db.query<{ n: number }>('SELECT count(*)::int AS n FROM audit'),
    ]);
    return { items: items.rows.map((r) => r.doc), total: total.rows[0]!.n };
  }
}
