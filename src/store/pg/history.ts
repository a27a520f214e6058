/** Article history in PostgreSQL (issue 14): revisions by (article, rev) and the trash by article id. */
import type { Revision, TrashEntry } from '../../schemas/revision.ts';
import type { RevisionRepository, TrashRepository } from '../types.ts';
import { toJson, type Db } from './db.ts';

export class PgRevisions implements RevisionRepository {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }
  async list(articleId: string) {
    return (
      await this.#db.query<{ doc: Revision }>('SELECT doc FROM revisions WHERE article_id = $1 ORDER BY rev DESC', [articleId])
    ).rows.map((r) => r.doc);
  }
  async get(articleId: string, rev: number) {
    return (await this.#db.query<{ doc: Revision }>('SELECT doc FROM revisions WHERE article_id = $1 AND rev = $2', [articleId, rev]))
      .rows[0]?.doc;
  }
  async latest(articleId: string) {
    return (
      await this.#db.query<{ doc: Revision }>('SELECT doc FROM revisions WHERE article_id = $1 ORDER BY rev DESC LIMIT 1', [articleId])
    ).rows[0]?.doc;
  }
  async save(revision: Revision) {
    await this.#db.query(
      'INSERT INTO revisions (article_id, rev, doc) VALUES ($1, $2, $3) ON CONFLICT (article_id, rev) DO UPDATE SET doc = EXCLUDED.doc',
      [revision.articleId, revision.rev, toJson(revision)],
    );
  }
  async deleteForArticle(articleId: string) {
    await this.#db.query('DELETE FROM revisions WHERE article_id = $1', [articleId]);
  }
}

export class PgTrash implements TrashRepository {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }
  async get(articleId: string) {
    return (await this.#db.query<{ doc: TrashEntry }>('SELECT doc FROM trash WHERE article_id = $1', [articleId])).rows[0]?.doc;
  }
  async list() {
    return (await this.#db.query<{ doc: TrashEntry }>('SELECT doc FROM trash ORDER BY deleted_at DESC')).rows.map((r) => r.doc);
  }
  async put(entry: TrashEntry) {
    await this.#db.query(
      `INSERT INTO trash (article_id, slug, deleted_at, doc) VALUES ($1, $2, $3, $4)
       ON CONFLICT (article_id) DO UPDATE SET slug = EXCLUDED.slug, deleted_at = EXCLUDED.deleted_at, doc = EXCLUDED.doc`,
      [entry.article.id, entry.article.slug, entry.deletedAt, toJson(entry)],
    );
  }
  async delete(articleId: string) {
    return ((await this.#db.query('DELETE FROM trash WHERE article_id = $1', [articleId])).rowCount ?? 0) > 0;
  }
  async slugExists(slug: string) {
    return (await this.#db.query('SELECT 1 FROM trash WHERE slug = $1 LIMIT 1', [slug])).rows.length > 0;
  }
}
