/**
 * Moving data between the two stores: `db:import` (a lowdb DATA_DIR into an empty PostgreSQL
 * database) and `db:export` (PostgreSQL into a new lowdb DATA_DIR). Both carry every collection
 * and finish by counting each one on both sides.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ArticleRecord } from '../../schemas/article.ts';
import type { AuditEntry } from '../../schemas/audit.ts';
import type { BriefingRun, Delivery } from '../../schemas/newsletter.ts';
import type { Revision, TrashEntry } from '../../schemas/revision.ts';
import type { Store } from '../types.ts';
import { openLowdbStore } from '../lowdb/index.ts';
import { lockHolder } from '../lock-file.ts';
import { readCollectionDocument } from '../lowdb/inspect.ts';
import { writeFileAtomic } from '../lowdb/file.ts';
import { LEGACY_FOLDER } from '../lowdb/migrate.ts';
import { toJson, transaction, type Db } from './db.ts';
import { PgArticles } from './articles.ts';
import { PgAnalytics } from './analytics.ts';
import { PgLive } from './live.ts';
import { PgMembers } from './members.ts';

/** Records of each collection, counted the same way on both sides. */
export type Counts = Record<string, number>;

const ALL = { offset: 0, limit: Number.MAX_SAFE_INTEGER };
type Tally = { likes: number; dislikes: number };

/** The collections readPgDocument answers (the ones lowdb's layout 1 kept as one file each). */
export const DOCUMENT_NAMES = [
  'articles',
  'counters',
  'votes',
  'comments',
  'subscribers',
  'sessions',
  'jobs',
  'sources',
  'users',
  'meta',
  'briefings',
] as const;

/** A collection of the PostgreSQL store in the one-document shape of lowdb's layout 1 (what readCollectionDocument answers for lowdb). */
export async function readPgDocument(db: Db, name: string): Promise<unknown> {
  const docs = async <T>(sql: string, params: unknown[] = []) => (await db.query<{ doc: T }>(sql, params)).rows.map((r) => r.doc);
  switch (name) {
    case 'articles': {
      const version = Number(
        (await db.query<{ value: string }>(`SELECT value FROM store_state WHERE name = 'articles_version'`)).rows[0]?.value ?? 0,
      );
      return { version, articles: await docs<ArticleRecord>('SELECT doc FROM articles ORDER BY id') };
    }
    case 'votes': {
      const votes: Record<string, Record<string, string>> = {};
      for (const row of (
        await db.query<{ article_id: string; visitor_id: string; kind: string }>(
          'SELECT article_id, visitor_id, kind FROM votes ORDER BY article_id, visitor_id',
        )
      ).rows) {
        (votes[row.article_id] ??= {})[row.visitor_id] = row.kind;
      }
      const tallies: Record<string, Tally> = {};
      const { rows } = await db.query<{ article_id: string; likes: string; dislikes: string }>(
        'SELECT article_id, greatest(0, likes + adjust_likes) AS likes, greatest(0, dislikes + adjust_dislikes) AS dislikes FROM tallies ORDER BY article_id',
      );
      for (const row of rows) {
        const tally = { likes: Number(row.likes), dislikes: Number(row.dislikes) };
        if (tally.likes || tally.dislikes || votes[row.article_id]) tallies[row.article_id] = tally;
      }
      return { votes, tallies };
    }
    case 'counters': {
      const { rows } = await db.query<{ article_id: string; views: string }>(
        'SELECT article_id, views FROM tallies WHERE views > 0 ORDER BY article_id',
      );
      return { views: Object.fromEntries(rows.map((r) => [r.article_id, Number(r.views)])) };
    }
    case 'comments':
      return { comments: await docs('SELECT doc FROM comments ORDER BY created_at DESC, id DESC') };
    case 'subscribers':
      return { subscribers: await docs('SELECT doc FROM subscribers ORDER BY seq') };
    case 'members':
      return { members: await docs('SELECT doc FROM members ORDER BY created_at, id') };
    case 'sessions':
      return { sessions: Object.fromEntries((await docs<{ id: string }>('SELECT doc FROM sessions ORDER BY id')).map((s) => [s.id, s])) };
    case 'jobs': {
      const { rows } = await db.query<{
        id: string;
        path: string;
        created_at: string;
        queued_at: string;
        attempts: number;
        last_error: string | null;
      }>('SELECT id::text, path, created_at, queued_at, attempts, last_error FROM jobs ORDER BY ord');
      const jobs = rows.map((r) => ({
        id: r.id,
        path: r.path,
        createdAt: r.created_at,
        queuedAt: r.queued_at,
        attempts: r.attempts,
        ...(r.last_error === null ? {} : { lastError: r.last_error }),
      }));
      return { jobs, seq: Math.max(0, ...jobs.map((j) => Number(j.id))) };
    }
    case 'sources':
      return { sources: await docs('SELECT doc FROM sources ORDER BY seq') };
    case 'users':
      return { users: await docs('SELECT doc FROM users ORDER BY seq') };
    case 'briefings':
      return { runs: await docs('SELECT doc FROM briefing_runs ORDER BY seq') };
    case 'meta': {
      const { rows } = await db.query<{ key: string; value: unknown }>('SELECT key, value FROM meta ORDER BY key');
      return Object.fromEntries(rows.map((r) => [r.key, r.value]));
    }
    default:
      throw new Error(`Unknown collection: ${name}`);
  }
}

/** Counts every collection through the Store interface (plus votes and views, which only the documents list). */
async function countStore(
  store: Store,
  documents: {
    votes: { votes: Record<string, Record<string, string>> };
    views: { views: Record<string, number> };
    meta: object;
    runs: BriefingRun[];
  },
): Promise<Counts> {
  const { votes, views, meta, runs } = documents;
  const articles = await store.articles.list({}, ALL);
  const trash = await store.trash.list();
  let revisions = 0;
  for (const id of new Set([...articles.map((a) => a.id), ...trash.map((t) => t.article.id)]))
    revisions += (await store.revisions.list(id)).length;
  let deliveries = 0;
  for (const run of runs) deliveries += (await store.briefings.deliveries(run.id)).size;
  return {
    articles: articles.length,
    votes: Object.values(votes.votes).reduce((n, byVisitor) => n + Object.keys(byVisitor).length, 0),
    views: Object.values(views.views).reduce((n, v) => n + v, 0),
    comments: await store.comments.count({}),
    sources: (await store.sources.list()).length,
    subscribers: (await store.subscribers.listFiltered({}, { offset: 0, limit: 0 })).total,
    users: await store.users.count(),
    audit: (await store.audit.list({ offset: 0, limit: 0 })).total,
    jobs: await store.jobs.size(),
    revisions,
    trash: trash.length,
    briefingRuns: runs.length,
    deliveries,
    meta: Object.keys(meta).length,
    // Page views over time (issue 33): every bucket and the views they hold.
    viewBuckets: (await store.analytics.exportAll()).length,
    bucketedViews: (await store.analytics.exportAll()).reduce((n, c) => n + c.views, 0),
    ...(await countLive(store)),
    members: await store.members.count(),
  };
}

/** Live coverage (issue 35): the articles that have one, and their updates. */
async function countLive(store: Store): Promise<{ liveCoverage: number; liveUpdates: number }> {
  const coverage = await store.live.listCoverage();
  let liveUpdates = 0;
  for (const { articleId } of coverage) liveUpdates += (await store.live.listUpdates(articleId)).length;
  return { liveCoverage: coverage.length, liveUpdates };
}

/** Copies every member (issue 48), oldest first, from one store's repository to another's. */
async function copyMembers(from: Store['members'], to: Store['members']): Promise<void> {
  for (const member of await from.all()) await to.insert(member);
}

/** Copies every live coverage and its updates from one store's repository to another's. */
async function copyLive(from: Store['live'], to: Store['live']): Promise<void> {
  for (const coverage of await from.listCoverage()) {
    await to.putCoverage(coverage);
    for (const update of await from.listUpdates(coverage.articleId)) await to.putUpdate(update);
  }
}

function sameCounts(a: Counts, b: Counts): string[] {
  return Object.keys(a)
    .filter((k) => a[k] !== b[k])
    .map((k) => `${k}: ${a[k]} here, ${b[k]} there`);
}

/** Bulk-inserts JSON rows through jsonb_array_elements, in chunks, on one connection. */
async function insertRows(client: { query: Db['query'] }, sql: string, rows: unknown[], chunk = 500): Promise<void> {
  for (let i = 0; i < rows.length; i += chunk) await client.query(sql, [toJson(rows.slice(i, i + chunk))]);
}

/** Tables the import fills; it refuses a database where any of them holds a row. */
const TABLES = [
  'articles',
  'votes',
  'tallies',
  'comments',
  'sources',
  'subscribers',
  'briefing_runs',
  'briefing_deliveries',
  'users',
  'audit',
  'sessions',
  'jobs',
  'revisions',
  'trash',
  'view_buckets',
  'live_coverage',
  'live_updates',
  'members',
];

/**
 * Copies the lowdb store in `dataDir` into the (migrated, empty) PostgreSQL database, in one
 * transaction: a failure leaves the database as it was. Answers the counts, equal on both sides.
 */
export async function importLowdb(
  dataDir: string,
  db: Db,
  openPg: () => Promise<Store>,
  log: (line: string) => void = console.log,
): Promise<Counts> {
  const dir = path.resolve(dataDir);
  const holder = lockHolder(dir);
  if (holder) throw new Error(`A server (pid ${holder}) is using ${dir}: stop it before importing.`);
  for (const table of TABLES) {
    const { rows } = await db.query(`SELECT 1 FROM ${table} LIMIT 1`);
    if (rows.length) throw new Error(`The database already holds data (table ${table}): import into an empty database.`);
  }
  const source = await openLowdbStore(dir, 'read');
  try {
    const articlesDoc = readCollectionDocument(dir, 'articles') as { version: number; articles: ArticleRecord[] };
    const votesDoc = readCollectionDocument(dir, 'votes') as {
      votes: Record<string, Record<string, string>>;
      tallies: Record<string, Tally>;
    };
    const viewsDoc = readCollectionDocument(dir, 'counters') as { views: Record<string, number> };
    const sessionsDoc = readCollectionDocument(dir, 'sessions') as {
      sessions: Record<string, { id: string; userId: string; expiresAt: string }>;
    };
    const jobsDoc = readCollectionDocument(dir, 'jobs') as {
      jobs: { id: string; path: string; createdAt: string; queuedAt: string; attempts: number; lastError?: string }[];
    };
    const meta = (readCollectionDocument(dir, 'meta') ?? {}) as Record<string, unknown>;
    const runs = ((readCollectionDocument(dir, 'briefings') ?? { runs: [] }) as { runs: BriefingRun[] }).runs;
    const comments = await source.comments.list({}, ALL);
    const subscribers = (await source.subscribers.listFiltered({}, ALL)).items.reverse();
    const audit = (await source.audit.list(ALL)).items.reverse();
    const trash = await source.trash.list();
    const articleIds = new Set([...articlesDoc.articles.map((a) => a.id), ...trash.map((t) => t.article.id)]);
    const revisions: Revision[] = [];
    for (const id of articleIds) revisions.push(...(await source.revisions.list(id)));
    const deliveries: { runId: string; delivery: Delivery }[] = [];
    for (const run of runs)
      for (const delivery of (await source.briefings.deliveries(run.id)).values()) deliveries.push({ runId: run.id, delivery });
    log(`[db:import] read ${dir}: ${articlesDoc.articles.length} articles`);

    await transaction(db, async (client) => {
      const articles = new PgArticles(client as unknown as Db);
      for (const article of articlesDoc.articles) await articles.insert(article);
      await client.query(`UPDATE store_state SET value = $1 WHERE name = 'articles_version'`, [articlesDoc.version]);
      const voteRows = Object.entries(votesDoc.votes).flatMap(([articleId, byVisitor]) =>
        Object.entries(byVisitor).map(([visitorId, kind]) => ({ articleId, visitorId, kind })),
      );
      await insertRows(
        client,
        `INSERT INTO votes (article_id, visitor_id, kind) SELECT v ->> 'articleId', v ->> 'visitorId', v ->> 'kind' FROM jsonb_array_elements($1::jsonb) v`,
        voteRows,
      );
      // Counted votes from the votes; the adjustment is what makes the stored tally (what readers saw).
      const counted = new Map<string, Tally>();
      for (const v of voteRows) {
        const c = counted.get(v.articleId) ?? { likes: 0, dislikes: 0 };
        if (v.kind === 'like') c.likes++;
        else c.dislikes++;
        counted.set(v.articleId, c);
      }
      const ids = new Set([...counted.keys(), ...Object.keys(votesDoc.tallies), ...Object.keys(viewsDoc.views)]);
      const tallyRows = [...ids].map((id) => {
        const c = counted.get(id) ?? { likes: 0, dislikes: 0 };
        const shown = votesDoc.tallies[id] ?? c;
        return {
          id,
          likes: c.likes,
          dislikes: c.dislikes,
          adjustLikes: shown.likes - c.likes,
          adjustDislikes: shown.dislikes - c.dislikes,
          views: viewsDoc.views[id] ?? 0,
        };
      });
      await insertRows(
        client,
        `INSERT INTO tallies (article_id, likes, dislikes, adjust_likes, adjust_dislikes, views)
         SELECT t ->> 'id', (t ->> 'likes')::bigint, (t ->> 'dislikes')::bigint, (t ->> 'adjustLikes')::bigint, (t ->> 'adjustDislikes')::bigint, (t ->> 'views')::bigint FROM jsonb_array_elements($1::jsonb) t`,
        tallyRows,
      );
      await insertRows(
        client,
        `INSERT INTO comments (id, article_id, status, created_at, doc) SELECT c ->> 'id', c ->> 'articleId', c ->> 'status', c ->> 'createdAt', c FROM jsonb_array_elements($1::jsonb) c`,
        comments,
      );
      await insertRows(
        client,
        `INSERT INTO sources (id, doc) SELECT s ->> 'id', s FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS x(s, n) ORDER BY n`,
        await source.sources.list(),
      );
      await insertRows(
        client,
        `INSERT INTO subscribers (id, email, token_hash, created_at, doc) SELECT s ->> 'id', s ->> 'email', encode(sha256(convert_to(s ->> 'token', 'UTF8')), 'hex'), s ->> 'createdAt', s
         FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS x(s, n) ORDER BY n`,
        subscribers,
      );
      await insertRows(
        client,
        `INSERT INTO users (id, username_key, doc) SELECT u ->> 'id', lower(u ->> 'username'), u FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS x(u, n) ORDER BY n`,
        await source.users.list(),
      );
      await insertRows(
        client,
        `INSERT INTO audit (at, doc) SELECT a ->> 'at', a FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS x(a, n) ORDER BY n`,
        audit as AuditEntry[],
      );
      await insertRows(
        client,
        `INSERT INTO sessions (id, user_id, expires_at, doc) SELECT s ->> 'id', s ->> 'userId', s ->> 'expiresAt', s FROM jsonb_array_elements($1::jsonb) s`,
        Object.values(sessionsDoc.sessions),
      );
      await insertRows(
        client,
        `INSERT INTO jobs (id, path, created_at, queued_at, attempts, last_error, ord)
         SELECT (j ->> 'id')::bigint, j ->> 'path', j ->> 'createdAt', j ->> 'queuedAt', (j ->> 'attempts')::int, j ->> 'lastError', (j ->> 'order')::bigint FROM jsonb_array_elements($1::jsonb) j`,
        jobsDoc.jobs.map((job, i) => ({ ...job, id: /^\d+$/.test(job.id) ? job.id : String(1_000_000_000 + i), order: i + 1 })),
      );
      await client.query(`SELECT setval('jobs_seq', greatest((SELECT max(id) FROM jobs), (SELECT max(ord) FROM jobs), 1))`);
      await insertRows(
        client,
        `INSERT INTO revisions (article_id, rev, doc) SELECT r ->> 'articleId', (r ->> 'rev')::int, r FROM jsonb_array_elements($1::jsonb) r`,
        revisions,
      );
      await insertRows(
        client,
        `INSERT INTO trash (article_id, slug, deleted_at, doc) SELECT t -> 'article' ->> 'id', t -> 'article' ->> 'slug', t ->> 'deletedAt', t FROM jsonb_array_elements($1::jsonb) t`,
        trash as TrashEntry[],
      );
      await insertRows(
        client,
        `INSERT INTO briefing_runs (id, date, doc) SELECT r ->> 'id', r ->> 'date', r FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS x(r, n) ORDER BY n`,
        runs,
      );
      await insertRows(
        client,
        `INSERT INTO briefing_deliveries (run_id, subscriber_id, doc) SELECT d ->> 'runId', d -> 'delivery' ->> 'subscriberId', d -> 'delivery' FROM jsonb_array_elements($1::jsonb) d`,
        deliveries,
      );
      // The lowdb store's id comes along, so a build made from either side is recognised by the other.
      await new PgAnalytics(client as unknown as Db).addViews(await source.analytics.exportAll());
      await copyLive(source.live, new PgLive(client as unknown as Db));
      await copyMembers(source.members, new PgMembers(client as unknown as Db));
      await client.query('DELETE FROM meta');
      await client.query('INSERT INTO meta (key, value) SELECT key, value FROM jsonb_each($1::jsonb)', [toJson(meta)]);
    });

    // The interface lists briefing runs by day only: each side's run list comes from its documents.
    const before = await countStore(source, { votes: votesDoc, views: viewsDoc, meta, runs });
    const target = await openPg();
    try {
      const after = await countStore(target, {
        votes: (await readPgDocument(db, 'votes')) as typeof votesDoc,
        views: (await readPgDocument(db, 'counters')) as typeof viewsDoc,
        meta: (await readPgDocument(db, 'meta')) as object,
        runs: ((await readPgDocument(db, 'briefings')) as { runs: BriefingRun[] }).runs,
      });
      const differ = sameCounts(before, after);
      if (differ.length) throw new Error(`Counts differ after the import: ${differ.join('; ')}`);
      return after;
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

/**
 * Writes the PostgreSQL store into `targetDir` (absent or empty) as a lowdb DATA_DIR: the collections
 * in layout 1's one-file shape, which the lowdb store's own migration then brings to the current
 * layout, then revisions, trash, audit and send logs through the Store interface. Counts both sides.
 */
export async function exportToLowdb(db: Db, source: Store, targetDir: string, log: (line: string) => void = console.log): Promise<Counts> {
  const dir = path.resolve(targetDir);
  if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0) throw new Error(`${dir} is not empty: export into a new folder.`);
  fs.mkdirSync(dir, { recursive: true });
  const documents: Record<string, unknown> = {};
  for (const name of DOCUMENT_NAMES) {
    documents[name] = await readPgDocument(db, name);
    await writeFileAtomic(path.join(dir, `${name}.json`), toJson(documents[name]));
  }
  log(`[db:export] wrote ${(documents.articles as { articles: unknown[] }).articles.length} articles; converting to the current layout`);
  const target = await openLowdbStore(dir, 'write');
  try {
    const articleIds = (documents.articles as { articles: ArticleRecord[] }).articles.map((a) => a.id);
    const trash = await source.trash.list();
    for (const entry of trash) await target.trash.put(entry);
    for (const id of new Set([...articleIds, ...trash.map((t) => t.article.id)])) {
      for (const revision of (await source.revisions.list(id)).reverse()) await target.revisions.save(revision);
    }
    for (const entry of (await source.audit.list(ALL)).items.reverse()) await target.audit.append(entry);
    const runs = (documents.briefings as { runs: BriefingRun[] }).runs;
    for (const run of runs) await target.briefings.recordDeliveries(run.id, [...(await source.briefings.deliveries(run.id)).values()]);
    await target.analytics.addViews(await source.analytics.exportAll());
    await copyLive(source.live, target.live);
    await copyMembers(source.members, target.members);
  } finally {
    await target.close();
  }
  // The layout-1 files were only the vehicle for the conversion.
  fs.rmSync(path.join(dir, LEGACY_FOLDER), { recursive: true, force: true });

  const runs = (documents.briefings as { runs: BriefingRun[] }).runs;
  const before = await countStore(source, {
    votes: documents.votes as never,
    views: documents.counters as never,
    meta: documents.meta as object,
    runs,
  });
  const check = await openLowdbStore(dir, 'read');
  try {
    const after = await countStore(check, {
      votes: readCollectionDocument(dir, 'votes') as never,
      views: readCollectionDocument(dir, 'counters') as never,
      meta: (readCollectionDocument(dir, 'meta') ?? {}) as object,
      runs: ((readCollectionDocument(dir, 'briefings') ?? { runs: [] }) as { runs: BriefingRun[] }).runs,
    });
    const differ = sameCounts(before, after);
    if (differ.length) throw new Error(`Counts differ after the export: ${differ.join('; ')}`);
    return after;
  } finally {
    await check.close();
  }
}
