/** Live coverage in PostgreSQL (issue 35): a row per live article's coverage state, a row per update. */
import type { LiveCoverage, LiveUpdate } from '../../schemas/live.ts';
import type { LiveRepository } from '../types.ts';
import { toJson, type Db } from './db.ts';

export class PgLive implements LiveRepository {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }
  async getCoverage(articleId: string) {
    return (await this.#db.query<{ doc: LiveCoverage }>('SELECT doc FROM live_coverage WHERE article_id = $1', [articleId])).rows[0]?.doc;
  }
  async putCoverage(coverage: LiveCoverage) {
    await this.#db.query(
      `INSERT INTO live_coverage (article_id, started_at, doc) VALUES ($1, $2, $3)
       ON CONFLICT (article_id) DO UPDATE SET started_at = EXCLUDED.started_at, doc = EXCLUDED.doc`,
      [coverage.articleId, coverage.startedAt, toJson(coverage)],
    );
  }
  async listCoverage() {
    return (await this.#db.query<{ doc: LiveCoverage }>('SELECT doc FROM live_coverage ORDER BY started_at, article_id')).rows.map(
      (r) => r.doc,
    );
  }
  async listUpdates(articleId: string) {
    return (
      await this.#db.query<{ doc: LiveUpdate }>('SELECT doc FROM live_updates WHERE article_id = $1 ORDER BY created_at DESC, id DESC', [
        articleId,
      ])
    ).rows.map((r) => r.doc);
  }
  async getUpdate(articleId: string, id: string) {
    return (await this.#db.query<{ doc: LiveUpdate }>('SELECT doc FROM live_updates WHERE article_id = $1 AND id = $2', [articleId, id]))
      .rows[0]?.doc;
  }
  async putUpdate(update: LiveUpdate) {
    await this.#db.query(
      `INSERT INTO live_updates (id, article_id, created_at, doc) VALUES ($1, $2, $3, $4)
       ON CONFLICT (id) DO UPDATE SET created_at = EXCLUDED.created_at, doc = EXCLUDED.doc`,
      [update.id, update.articleId, update.createdAt, toJson(update)],
    );
  }
  async deleteUpdate(articleId: string, id: string) {
    return ((await this.#db.query('DELETE FROM live_updates WHERE article_id = $1 AND id = $2', [articleId, id])).rowCount ?? 0) > 0;
  }
  async deleteForArticle(articleId: string) {
    await this.#db.query('DELETE FROM live_updates WHERE article_id = $1', [articleId]);
    await this.#db.query('DELETE FROM live_coverage WHERE article_id = $1', [articleId]);
  }
}
