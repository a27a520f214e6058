/** Page views over time in PostgreSQL: one `view_buckets` row per bucket, dimension and key, added to by one upsert per flush. */
import type { ViewCount, ViewDimension, ViewGrain } from '../../schemas/analytics.ts';
import type { AnalyticsRepository } from '../types.ts';
import type { Db } from './db.ts';

type BucketRow = { grain: ViewGrain; start: string; dim: ViewDimension; key: string; views: string };

function countOf(row: BucketRow): ViewCount {
  return { grain: row.grain, start: row.start, dim: row.dim, key: row.key, views: Number(row.views) };
}

export class PgAnalytics implements AnalyticsRepository {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }

  async addViews(counts: readonly ViewCount[]) {
    // One row per key (an upsert may not touch a row twice), in key order so two servers' flushes never deadlock.
    const merged = new Map<string, ViewCount>();
    for (const count of counts) {
      const id = `${count.grain}\u0000${count.dim}\u0000${count.start}\u0000${count.key}`;
      const seen = merged.get(id);
      if (seen) seen.views += count.views;
      else merged.set(id, { ...count });
    }
    if (merged.size === 0) return;
    const rows = [...merged].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, count]) => count);
    await this.#db.query(
      `INSERT INTO view_buckets AS v (grain, start, dim, key, views)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[])
       ON CONFLICT (grain, dim, start, key) DO UPDATE SET views = v.views + EXCLUDED.views`,
      [rows.map((r) => r.grain), rows.map((r) => r.start), rows.map((r) => r.dim), rows.map((r) => r.key), rows.map((r) => r.views)],
    );
  }

  async listViews(grain: ViewGrain, dim: ViewDimension, from: string, to: string, keys?: readonly string[]) {
    const params: unknown[] = [grain, dim, from, to];
    if (keys) params.push(keys);
    const { rows } = await this.#db.query<BucketRow>(
      `SELECT grain, start, dim, key, views FROM view_buckets
       WHERE grain = $1 AND dim = $2 AND start >= $3 AND start < $4${keys ? ' AND key = ANY($5::text[])' : ''}
       ORDER BY start, key`,
      params,
    );
    return rows.map(countOf);
  }

  async prune(grain: ViewGrain, before: string) {
    const { rows } = await this.#db.query<{ n: string }>(
      `WITH gone AS (DELETE FROM view_buckets WHERE grain = $1 AND start < $2 RETURNING start)
       SELECT count(DISTINCT start) AS n FROM gone`,
      [grain, before],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async exportAll() {
    const { rows } = await this.#db.query<BucketRow>(
      'SELECT grain, start, dim, key, views FROM view_buckets ORDER BY grain, dim, start, key',
    );
    return rows.map(countOf);
  }
}
