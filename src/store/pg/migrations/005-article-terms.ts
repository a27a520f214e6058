/** Migration 5 (issue 35): each article's tag and author slugs as columns, indexed for the tag and author pages. */
import type pg from 'pg';
import { articleTermColumns } from '../terms.ts';

export default `
ALTER TABLE articles ADD COLUMN tag_slugs text[] NOT NULL DEFAULT '{}';
ALTER TABLE articles ADD COLUMN tag_names text[] NOT NULL DEFAULT '{}';
ALTER TABLE articles ADD COLUMN author_slug text COLLATE "C";
CREATE INDEX articles_published_tags ON articles USING gin (tag_slugs) WHERE status = 'published';
CREATE INDEX articles_published_author ON articles (author_slug, sort_date DESC, id DESC) WHERE status = 'published';
`;

/** Rows read and updated per statement while filling the new columns. */
const BATCH = 1000;

/** Fills the new columns of the articles already stored, a batch at a time, by id. */
export async function backfillArticleTerms(client: pg.PoolClient): Promise<void> {
  let after = '';
  for (;;) {
    const { rows } = await client.query<{ id: string; tags: string[] | null; author: string | null }>(
      `SELECT id, doc -> 'tags' AS tags, doc ->> 'authorName' AS author FROM articles WHERE id > $1 ORDER BY id LIMIT $2`,
      [after, BATCH],
    );
    if (rows.length === 0) return;
    const columns = rows.map((row) => articleTermColumns(row.tags ?? [], row.author ?? ''));
    await client.query(
      `UPDATE articles SET tag_slugs = v.slugs, tag_names = v.names, author_slug = v.author
       FROM jsonb_to_recordset($1::jsonb) AS v(id text, slugs text[], names text[], author text) WHERE articles.id = v.id`,
      [JSON.stringify(rows.map((row, i) => ({ id: row.id, ...columns[i] })))],
    );
    after = rows.at(-1)!.id;
  }
}
