/**
 * Articles in PostgreSQL: typed columns for every filter and order, the record as JSONB, a weighted
 * tsvector for search; each write bumps the collection version in the same statement.
 */
import type { ArticleFilter, ArticlePeriod, ArticleRecord, ArticleStats, TermCount } from '../../schemas/article.ts';
import type { TermKind } from '../../schemas/taxonomy.ts';
import { articleTermColumns } from './terms.ts';
import type { ArticleRepository, ArticleSort, Page } from '../types.ts';
import { toJson, transaction, type Db } from './db.ts';
import { fold, isoOrNull, queryTerms, stripTags, tsQuery } from './text.ts';
import { publicBodyOf } from '../../schemas/teaser.ts';

/**
 * Rank weights by class {D, C, B, A}: title (A) > dek (B) > author, tags and source (D) > body (C),
 * the same order as the lowdb index's 8 / 4 / 2 / 1.
 */
const RANK_WEIGHTS = '{0.25, 0.125, 0.5, 1.0}';

const SEARCH_VECTOR = `setweight(to_tsvector('simple', $15), 'A') || setweight(to_tsvector('simple', $16), 'B')
  || setweight(to_tsvector('simple', $17), 'C') || setweight(to_tsvector('simple', $18), 'D')`;

/** Each column and the bound value it takes from rowValues ($15-$18 feed the search vector). */
const FIELDS: [column: string, value: string][] = [
  ['id', '$1'],
  ['slug', '$2'],
  ['status', '$3'],
  ['section', '$4'],
  ['created_by', '$5'],
  ['is_breaking', '$6'],
  ['is_editors_pick', '$7'],
  ['source_label', '$8'],
  ['sort_date', '$9'],
  ['sort_at', '$10::timestamptz'],
  ['updated_at', '$11'],
  ['scheduled_for', '$12::timestamptz'],
  ['origin_source', '$13'],
  ['origin_guid', '$14'],
  ['canonical_url', '$19'],
  ['version', "($21::jsonb ->> 'version')::int"],
  ['filter_text', '$20'],
  ['search', SEARCH_VECTOR],
  ['doc', '$21::jsonb'],
  ['tag_slugs', '$22::text[]'],
  ['tag_names', '$23::text[]'],
  ['author_slug', '$24'],
];

/** Bound values $1..$24 of an article row (see FIELDS). */
function rowValues(article: ArticleRecord): unknown[] {
  const sortDate = article.publishedAt ?? article.updatedAt;
  const filterText = [article.title, article.dek ?? '', article.authorName, article.sourceLabel ?? '', ...article.tags]
    .join('\n')
    .toLowerCase();
  return [
    article.id,
    article.slug,
    article.status,
    article.section,
    article.createdBy ?? null,
    article.isBreaking,
    article.isEditorsPick,
    article.sourceLabel ?? null,
    sortDate,
    isoOrNull(sortDate),
    article.updatedAt,
    isoOrNull(article.scheduledFor),
    article.origin?.sourceId ?? null,
    article.origin?.guid ?? null,
    fold(article.title),
    fold(article.dek ?? ''),
    // Search finds what the page shows: of a gated article's body, the teaser (issue 48).
    fold(stripTags(publicBodyOf(article))),
    fold([article.authorName, article.sourceLabel ?? '', ...article.tags].join(' ')),
    article.origin?.canonicalUrl ?? null,
    filterText,
    toJson(article),
    ...(({ slugs, names, author }) => [slugs, names, author])(articleTermColumns(article.tags, article.authorName)),
  ];
}

/** Wraps a write so the collection version is bumped in the same statement, only when a row changed. */
function bumping(write: string): string {
  return `WITH w AS (${write}),
    v AS (UPDATE store_state SET value = value + 1 WHERE name = 'articles_version' AND EXISTS (SELECT 1 FROM w))
    SELECT * FROM w`;
}

/** Normalises an ISO date or date-time bound to a comparable ISO string (as the lowdb store does). */
function bound(value: string | undefined, end: boolean): string | undefined {
  if (!value) return undefined;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return `${value}T${end ? '23:59:59.999' : '00:00:00.000'}Z`;
  return new Date(value).toISOString();
}

/** A WHERE clause for the filter, appending its values to `params`. */
function whereOf(filter: ArticleFilter, params: unknown[]): string {
  const parts: string[] = [];
  const add = (value: unknown) => `$${params.push(value)}`;
  if (filter.section) parts.push(`section = ${add(filter.section)}`);
  // One status as an equality, so the planner can use the published-listing partial index.
  if (filter.statuses?.length === 1) parts.push(`status = ${add(filter.statuses[0])}`);
  else if (filter.statuses) parts.push(`status = ANY(${add(filter.statuses)}::text[])`);
  if (filter.createdBy !== undefined) parts.push(`created_by IS NOT DISTINCT FROM ${add(filter.createdBy)}`);
  // Containment, so the planner can use the GIN index on published articles' tag slugs.
  if (filter.tag !== undefined) parts.push(`tag_slugs @> ARRAY[${add(filter.tag)}]::text[]`);
  if (filter.author !== undefined) parts.push(`author_slug = ${add(filter.author)}`);
  if (filter.isBreaking !== undefined) parts.push(`is_breaking = ${add(filter.isBreaking)}`);
  if (filter.isEditorsPick !== undefined) parts.push(`is_editors_pick = ${add(filter.isEditorsPick)}`);
  if (filter.source) parts.push(`strpos(lower(coalesce(source_label, '')), ${add(filter.source.toLowerCase())}) > 0`);
  const from = bound(filter.dateFrom, false);
  const to = bound(filter.dateTo, true);
  if (from) parts.push(`sort_at >= ${add(from)}::timestamptz`);
  if (to) parts.push(`sort_at <= ${add(to)}::timestamptz`);
  if (filter.search) parts.push(`strpos(filter_text, ${add(filter.search.toLowerCase())}) > 0`);
  return parts.length ? `WHERE ${parts.join(' AND ')}` : '';
}

type DocRow = { doc: ArticleRecord };

export class PgArticles implements ArticleRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async #one(sql: string, params: unknown[]): Promise<ArticleRecord | undefined> {
    return (await this.#db.query<DocRow>(sql, params)).rows[0]?.doc;
  }

  async #many(sql: string, params: unknown[]): Promise<ArticleRecord[]> {
    return (await this.#db.query<DocRow>(sql, params)).rows.map((r) => r.doc);
  }

  async get(id: string) {
    return this.#one('SELECT doc FROM articles WHERE id = $1', [id]);
  }

  async getBySlug(slug: string) {
    return this.#one('SELECT doc FROM articles WHERE slug = $1 ORDER BY id LIMIT 1', [slug]);
  }

  async list(filter: ArticleFilter, page: Page, sort: ArticleSort = 'recent') {
    const params: unknown[] = [];
    const where = whereOf(filter, params);
    const order = sort === 'updated' ? 'updated_at DESC, id DESC' : 'sort_date DESC, id DESC';
    return this.#many(
      `SELECT doc FROM articles ${where} ORDER BY ${order} OFFSET $${params.push(page.offset)} LIMIT $${params.push(page.limit)}`,
      params,
    );
  }

  async count(filter: ArticleFilter) {
    const params: unknown[] = [];
    const { rows } = await this.#db.query<{ n: number }>(`SELECT count(*)::int AS n FROM articles ${whereOf(filter, params)}`, params);
    return rows[0]!.n;
  }

  /** Full-text search on the tsvector: every term (the last also as a prefix), relevance, then recency. */
  async search(query: string, filter: ArticleFilter, page: Page) {
    const terms = queryTerms(query);
    if (terms.length === 0) return { items: [], total: 0 };
    const params: unknown[] = [tsQuery(terms)];
    const where = whereOf(filter, params);
    const match = `search @@ to_tsquery('simple', $1)`;
    const sql = `SELECT doc, count(*) OVER ()::int AS total FROM articles
      ${where ? `${where} AND ${match}` : `WHERE ${match}`}
      ORDER BY ts_rank('${RANK_WEIGHTS}', search, to_tsquery('simple', $1)) DESC, sort_date DESC, id DESC
      OFFSET $${params.push(page.offset)} LIMIT $${params.push(page.limit)}`;
    const { rows } = await this.#db.query<DocRow & { total: number }>(sql, params);
    if (rows.length > 0 || (page.offset === 0 && page.limit > 0)) return { items: rows.map((r) => r.doc), total: rows[0]?.total ?? 0 };
    // An empty page (past the end, or a limit of 0) has no rows to carry the total: count it.
    const countParams: unknown[] = [params[0]];
    const countWhere = whereOf(filter, countParams);
    const counted = await this.#db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM articles ${countWhere ? `${countWhere} AND ${match}` : `WHERE ${match}`}`,
      countParams,
    );
    return { items: [], total: counted.rows[0]!.n };
  }

  async stats(): Promise<ArticleStats> {
    const { rows } = await this.#db.query<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM articles GROUP BY status');
    const stats = { totalArticles: 0, published: 0, drafts: 0, scheduled: 0, archived: 0 };
    for (const { status, n } of rows) {
      stats.totalArticles += n;
      if (status === 'published') stats.published += n;
      else if (status === 'draft') stats.drafts += n;
      else if (status === 'scheduled') stats.scheduled += n;
      else stats.archived += n;
    }
    return stats;
  }

  async periods(): Promise<ArticlePeriod[]> {
    // sort_at is the published date (else the last update) as a timestamp: its UTC month is articlePeriod's.
    const { rows } = await this.#db.query<ArticlePeriod>(
      `SELECT to_char(sort_at AT TIME ZONE 'UTC', 'YYYY-MM') AS period, max(updated_at) AS lastmod, count(*)::int AS count
       FROM articles WHERE status = 'published' GROUP BY 1 ORDER BY 1 DESC`,
    );
    return rows;
  }

  async terms(kind: TermKind): Promise<TermCount[]> {
    // The spelling shown is the newest article's, as the lowdb store answers.
    const sql =
      kind === 'tag'
        ? `SELECT t.slug, (array_agg(t.name ORDER BY a.sort_date DESC, a.id DESC))[1] AS name, count(*)::int AS count
           FROM articles a, unnest(a.tag_slugs, a.tag_names) AS t(slug, name) WHERE a.status = 'published' GROUP BY t.slug`
        : `SELECT author_slug AS slug, (array_agg(doc ->> 'authorName' ORDER BY sort_date DESC, id DESC))[1] AS name, count(*)::int AS count
           FROM articles WHERE status = 'published' AND author_slug IS NOT NULL GROUP BY author_slug`;
    const { rows } = await this.#db.query<TermCount>(sql);
    return rows.sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
  }

  async slugExists(slug: string, exceptId?: string) {
    const { rows } = await this.#db.query('SELECT 1 FROM articles WHERE slug = $1 AND id IS DISTINCT FROM $2 LIMIT 1', [
      slug,
      exceptId ?? null,
    ]);
    return rows.length > 0;
  }

  async findByOrigin(sourceId: string, guid: string) {
    return this.#one('SELECT doc FROM articles WHERE origin_source = $1 AND origin_guid = $2 LIMIT 1', [sourceId, guid]);
  }

  async findByCanonicalUrl(url: string) {
    return this.#one('SELECT doc FROM articles WHERE canonical_url = $1 LIMIT 1', [url]);
  }

  async listDue(now: string) {
    return this.#many(
      `SELECT doc FROM articles WHERE status = 'scheduled' AND scheduled_for <= $1::timestamptz ORDER BY scheduled_for, id`,
      [now],
    );
  }

  async insert(article: ArticleRecord) {
    const sql = bumping(
      `INSERT INTO articles (${FIELDS.map(([c]) => c).join(', ')}) VALUES (${FIELDS.map(([, v]) => v).join(', ')}) ON CONFLICT (id) DO NOTHING RETURNING id`,
    );
    const { rows } = await this.#db.query(sql, rowValues(article));
    if (rows.length === 0) throw new Error(`Article ${article.id} exists`);
  }

  async insertMany(articles: readonly ArticleRecord[]) {
    // One transaction: all of them or none.
    await transaction(this.#db, async (client) => {
      const inside = new PgArticles(client as unknown as Db);
      for (const article of articles) await inside.insert(article);
    });
  }

  /** A whole-record UPDATE (the store sets the version, from `versionSql`) of the rows matching `where`. */
  #update(versionSql: string, where: string): string {
    const set = FIELDS.filter(([column]) => column !== 'id').map(([column, value]) =>
      column === 'version'
        ? `version = ${versionSql}`
        : column === 'doc'
          ? `doc = ${value} || jsonb_build_object('version', ${versionSql})`
          : `${column} = ${value}`,
    );
    return bumping(`UPDATE articles SET ${set.join(', ')} WHERE ${where} RETURNING doc`);
  }

  async replace(article: ArticleRecord) {
    const { rows } = await this.#db.query(this.#update('coalesce(articles.version, 1) + 1', 'id = $1'), rowValues(article));
    return rows.length > 0;
  }

  /** Compare-and-set in one conditional UPDATE: whichever server runs it, exactly one save of a version wins. */
  async replaceIfVersion(article: ArticleRecord, expectedVersion: number) {
    const params = [...rowValues(article), expectedVersion];
    const saved = (
      await this.#db.query<DocRow>(this.#update('$25::int + 1', 'id = $1 AND coalesce(articles.version, 1) = $25::int'), params)
    ).rows[0]?.doc;
    if (saved) return { saved };
    const current = await this.get(article.id);
    return current ? { conflict: current } : undefined;
  }

  /** Publishes in one conditional UPDATE (status still `scheduled`): exactly once, whichever server asks. */
  async publishIfScheduled(id: string, now: string) {
    const next = 'coalesce(version, 1) + 1';
    const publishedAt = `coalesce(doc ->> 'publishedAt', $2)`;
    const sql = bumping(`UPDATE articles SET status = 'published', scheduled_for = NULL, updated_at = $2,
        sort_date = ${publishedAt}, sort_at = (${publishedAt})::timestamptz, version = ${next},
        doc = (doc - 'scheduledFor') || jsonb_build_object('status', 'published', 'publishedAt', ${publishedAt}, 'updatedAt', $2::text, 'version', ${next})
      WHERE id = $1 AND status = 'scheduled' RETURNING doc`);
    return (await this.#db.query<DocRow>(sql, [id, now])).rows[0]?.doc;
  }

  async delete(id: string) {
    const { rows } = await this.#db.query(bumping('DELETE FROM articles WHERE id = $1 RETURNING id'), [id]);
    return rows.length > 0;
  }

  async version() {
    const { rows } = await this.#db.query<{ value: string }>(`SELECT value FROM store_state WHERE name = 'articles_version'`);
    return Number(rows[0]?.value ?? 0);
  }
}
