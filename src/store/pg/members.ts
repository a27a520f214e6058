/** The PostgreSQL member repository (issue 48): a row per member, the record as jsonb beside its unique keys. */
import { matchesMemberFilter, type Member, type MemberFilter } from '../../schemas/member.ts';
import type { MemberRepository, Page } from '../types.ts';
import { toJson, transaction, type Db } from './db.ts';

type DocRow = { doc: Member };

export class PgMembers implements MemberRepository {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }

  async #one(sql: string, params: unknown[]): Promise<Member | undefined> {
    return (await this.#db.query<DocRow>(sql, params)).rows[0]?.doc;
  }

  async get(id: string) {
    return this.#one('SELECT doc FROM members WHERE id = $1', [id]);
  }

  async getByEmail(email: string) {
    return this.#one('SELECT doc FROM members WHERE email = $1', [email.toLowerCase()]);
  }

  async getByStripeCustomer(customerId: string) {
    return this.#one('SELECT doc FROM members WHERE stripe_customer_id = $1', [customerId]);
  }

  async insert(member: Member) {
    const { rowCount } = await this.#db.query(
      `INSERT INTO members (id, email, stripe_customer_id, created_at, doc) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
      [member.id, member.email, member.stripeCustomerId ?? null, member.createdAt, toJson(member)],
    );
    return rowCount === 1;
  }

  /** The row is locked from the read to the write: a second change of the same member, on any server, waits and sees the first. */
  async mutate(id: string, change: (member: Member) => Member | undefined) {
    return transaction(this.#db, async (client) => {
      const current = (await client.query<DocRow>('SELECT doc FROM members WHERE id = $1 FOR UPDATE', [id])).rows[0]?.doc;
      if (!current) return undefined;
      const next = change(structuredClone(current));
      if (!next) return current;
      const stored = { ...next, id };
      await client.query('UPDATE members SET email = $2, stripe_customer_id = $3, doc = $4 WHERE id = $1', [
        id,
        stored.email,
        stored.stripeCustomerId ?? null,
        toJson(stored),
      ]);
      return stored;
    });
  }

  async delete(id: string) {
    const { rowCount } = await this.#db.query('DELETE FROM members WHERE id = $1', [id]);
    return rowCount === 1;
  }

  /**
   * The status filter depends on the clock (a period's end, a grace period), so it is applied to the rows
   * the search keeps, by the same function as lowdb's; a newsroom's members fit in one read.
   */
  async list(filter: MemberFilter, page: Page, now: number) {
    const q = filter.q?.toLowerCase();
    const pattern = q ? `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
    const { rows } = await this.#db.query<DocRow>(
      `SELECT doc FROM members WHERE $1::text IS NULL OR email LIKE $1 OR lower(doc ->> 'name') LIKE $1 ORDER BY created_at DESC, id DESC`,
      [pattern],
    );
    const matching = rows.map((r) => r.doc).filter((m) => matchesMemberFilter(m, { status: filter.status }, now));
    return { items: matching.slice(page.offset, page.offset + page.limit), total: matching.length };
  }

  async all() {
    return (await this.#db.query<DocRow>('SELECT doc FROM members ORDER BY created_at, id')).rows.map((r) => r.doc);
  }

  async count() {
    return Number((await this.#db.query<{ n: string }>('SELECT count(*) AS n FROM members')).rows[0]!.n);
  }
}
