/**
 * The upgrade path: today's server on the data version 0.1.0 left (tests/fixtures/upgrade-0.1.0, made by 0.1.0
 * itself), on the store this run tests: the lowdb data folder, or (TEST_STORE=pg) the pg_dump loaded with psql.
 * It must find everything 0.1.0 answered, serve it, and keep working on it.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { ROOT, makeDataDir, startServer, type TestServer } from '../helpers/server.ts';
import { databaseFor, postgresBinDir, testingPostgres } from '../helpers/postgres.ts';
import { TestClient, expectError, read, waitForIdleQueue, withTestDatabase } from './support.ts';
import type { Article, ArticleSummary } from '../../src/schemas/article.ts';
import type { Revision, RevisionSummary, TrashItem } from '../../src/schemas/revision.ts';
import type { AuditEntry } from '../../src/schemas/audit.ts';
import { diffBodies } from '../../src/islands/editor/body-diff.ts';
import { MIGRATIONS } from '../../src/store/pg/migrations/index.ts';
import { APP_VERSION } from '../../src/server/version.ts';

const FIXTURE = path.join(ROOT, 'tests/fixtures/upgrade-0.1.0');
const STORE = testingPostgres() ? 'postgres' : 'lowdb';

type Answer = { status: number; body: unknown };
/** What 0.1.0's API answered about the fixture's newsroom (make.ts wrote it before stopping that server). */
type Expected = {
  admin: { username: string; password: string };
  users: { username: string; role: string; password: string }[];
  ids: Record<string, string>;
  heroImage: string;
  articles: Article[];
  stats: Record<string, number>;
  publishedForReaders: Article[];
  revisions: Record<string, Revision[]>;
  corrections: Record<string, unknown>;
  comments: Record<string, { reader: Answer; moderator: Answer }>;
  votes: Record<string, Answer>;
  adminComments: unknown[];
  trash: TrashItem[];
  userList: { items: unknown[] };
  audit: { items: AuditEntry[]; total: number };
  sources: unknown[];
  subscribers: { items: unknown[]; total: number; counts: Record<string, number>; lastBriefing: unknown };
  search: ArticleSummary[];
};
const expected = JSON.parse(fs.readFileSync(path.join(FIXTURE, `expected-${STORE}.json`), 'utf8')) as Expected;
const APP_SECRET = 'upgrade-fixture-0.1.0-app-secret-0123456789abcdef';

let server: TestServer;
let admin: TestClient;
let reader: TestClient;

function bySlug(slug: string): Article {
  const article = expected.articles.find((a) => a.slug === slug);
  if (!article) throw new Error(`The fixture has no article ${slug}`);
  return article;
}
const storm = bySlug('harbour-cities-brace-for-the-winter-storm-season');
const trashed = expected.trash[0]!;
const published = expected.articles.filter((a) => a.status === 'published');
const unpublished = expected.articles.filter((a) => a.status !== 'published');

async function page(publicPath: string): Promise<{ status: number; text: string }> {
  const response = await fetch(new URL(publicPath, server.url), { redirect: 'manual' });
  return { status: response.status, text: await response.text() };
}

/**
 * The trash keeps an entry 30 days from its delete and a start purges older ones: the copy's one entry is
 * dated the day before this run, the only change made to what 0.1.0 wrote.
 */
const deletedAt = new Date(Date.now() - 24 * 60 * 60 * 1000).toISOString();

function copyLowdbFixture(dataDir: string): void {
  fs.cpSync(path.join(FIXTURE, 'data'), dataDir, { recursive: true });
  const entries = fs.globSync(`trash/*/${trashed.id}.json`, { cwd: dataDir });
  expect(entries).toHaveLength(1);
  const file = path.join(dataDir, entries[0]!);
  fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), deletedAt }));
}

async function loadPostgresFixture(dataDir: string): Promise<void> {
  const url = await databaseFor(dataDir);
  // pg_dump 15.14 and later guard the dump with \restrict; an older psql would stop at the unknown command.
  const sql = fs
    .readFileSync(path.join(FIXTURE, 'postgres.sql'), 'utf8')
    .split('\n')
    .filter((line) => !/^\\(un)?restrict /.test(line))
    .join('\n');
  execFileSync(path.join(postgresBinDir()!, 'psql'), ['--quiet', '--no-psqlrc', '-v', 'ON_ERROR_STOP=1', '-d', url], {
    input: sql,
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  await withTestDatabase(dataDir, async (db) => {
    const moved = await db.query(
      `UPDATE trash SET deleted_at = $1, doc = jsonb_set(doc, '{deletedAt}', to_jsonb($1::text)) WHERE article_id = $2`,
      [deletedAt, trashed.id],
    );
    expect(moved.rowCount).toBe(1);
  });
  fs.cpSync(path.join(FIXTURE, 'pg-images'), path.join(dataDir, 'images'), { recursive: true });
}

beforeAll(async () => {
  const dataDir = makeDataDir('meridian-upgrade-');
  if (STORE === 'postgres') await loadPostgresFixture(dataDir);
  else copyLowdbFixture(dataDir);
  server = await startServer({
    dataDir,
    env: { ADMIN_USERNAME: expected.admin.username, ADMIN_PASSWORD: expected.admin.password, APP_SECRET, TRUST_PROXY: 'true' },
  });
  // The served folder came from an empty build: the start renders every page of the newsroom first.
  await waitForIdleQueue(server.url, 120_000);
  admin = new TestClient(server.url);
  await admin.login(expected.admin.username, expected.admin.password);
  reader = new TestClient(server.url);
}, 180_000);

beforeEach(() => {
  onTestFailed(() => console.log(`--- server output (tail) ---\n${server.output().slice(-4000)}`));
});

afterAll(async () => {
  await server?.stop();
});

describe(`today's server on the ${STORE} data of version 0.1.0`, () => {
  it.runIf(STORE === 'postgres')('has applied every migration of today on the old database', async () => {
    const applied = await withTestDatabase(server.dataDir, async (db) =>
      (await db.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map((r) => Number(r.version)),
    );
    expect(applied).toEqual(MIGRATIONS.map((m) => m.version));
  });

  it('names the release it now runs in the admin dashboard', async () => {
    const dashboard = await admin.get('/admin');
    expect(dashboard.status).toBe(200);
    expect(await dashboard.text()).toMatch(
      new RegExp(`data-testid="app-version"[^>]*>Meridian News ${APP_VERSION.replace(/\./g, '\\.')}<`),
    );
  });

  it('finds every article by id and by slug, with its fields, status, counters and version', async () => {
    expect(expected.articles).toHaveLength(12);
    for (const article of expected.articles) {
      const byId = await admin.get(`/api/articles/${article.id}`);
      expect(byId.status, article.slug).toBe(200);
      expect(byId.headers.get('etag')).toBe(`"${article.version}"`);
      expect(await byId.json()).toMatchObject(article);
      const { status, body } = await read<Article>(await admin.get(`/api/articles/by-slug/${article.slug}`));
      expect(status, article.slug).toBe(200);
      expect(body).toMatchObject(article);
    }
    expect(storm).toMatchObject({ version: 4, likes: 8, dislikes: 1, views: 4, heroImage: expected.heroImage, tags: ['climate', 'coast'] });
    expect((await read(await admin.get('/api/articles/stats'))).body).toMatchObject(expected.stats);
    expect(expected.stats).toMatchObject({ totalArticles: 12, published: 8, drafts: 2, scheduled: 1, archived: 1 });
  });

  it('shows readers the published articles only; drafts and the rest to staff', async () => {
    const { body: list } = await read<Article[]>(await reader.get('/api/articles?pageSize=100'));
    expect(list.map((a) => a.id).sort()).toEqual(published.map((a) => a.id).sort());
    expect(list).toMatchObject(expected.publishedForReaders);
    for (const article of unpublished) {
      await expectError(await reader.get(`/api/articles/${article.id}`), 404);
      await expectError(await reader.get(`/api/articles/by-slug/${article.slug}`), 404);
    }
    // Ownership survived: the contributor still sees her own draft and nobody else's.
    const cora = new TestClient(server.url);
    await cora.login('cora', expected.users.find((u) => u.username === 'cora')!.password);
    expect((await cora.get(`/api/articles/${bySlug('notes-for-a-profile-of-the-harbour-master').id}`)).status).toBe(200);
    expect((await cora.get(`/api/articles/${bySlug('budget-explainer-work-in-progress').id}`)).status).toBe(404);
  });

  it('serves each published article page and lists it on its section page; the others answer 404', async () => {
    for (const article of published) {
      const articlePage = await page(`/article/${article.slug}`);
      expect(articlePage.status, article.slug).toBe(200);
      expect(articlePage.text).toContain(article.title.replace(/&/g, '&amp;'));
      const sectionPage = await page(`/section/${article.section}`);
      expect(sectionPage.status, article.section).toBe(200);
      expect(sectionPage.text).toContain(`/article/${article.slug}`);
    }
    for (const slug of [...unpublished.map((a) => a.slug), trashed.slug]) expect((await page(`/article/${slug}`)).status, slug).toBe(404);
  });

  it('serves the hero image 0.1.0 processed, at every width of its srcset', async () => {
    const html = (await page(`/article/${storm.slug}`)).text;
    const base = expected.heroImage.replace(/\/1200\.webp$/, '');
    const srcset = /srcset="([^"]+)"/.exec(html.slice(html.indexOf(base) - 2000))?.[1] ?? '';
    for (const width of [400, 800, 1200]) {
      expect(srcset).toContain(`${base}/${width}.webp ${width}w`);
      const image = await fetch(new URL(`${base}/${width}.webp`, server.url));
      expect(image.status).toBe(200);
      expect(image.headers.get('content-type')).toBe('image/webp');
      expect((await sharp(Buffer.from(await image.arrayBuffer())).metadata()).width).toBe(width);
    }
  });

  it('finds the comments: visible ones for readers, hidden ones too for moderators', async () => {
    for (const article of expected.articles) {
      const { reader: forReader, moderator } = expected.comments[article.id]!;
      expect(await read(await reader.get(`/api/articles/${article.id}/comments`))).toEqual(forReader);
      expect(await read(await admin.get(`/api/articles/${article.id}/comments`))).toEqual(moderator);
    }
    const { body: all } = await read<{ status: string }[]>(await admin.get('/api/admin/comments?pageSize=100'));
    expect(all).toEqual(expected.adminComments);
    expect(all.filter((c) => c.status === 'hidden')).toHaveLength(1);
    expect(all).toHaveLength(5);
  });

  it('finds the vote tallies and the views', async () => {
    for (const article of published)
      expect(await read(await reader.get(`/api/articles/${article.id}/vote`))).toEqual(expected.votes[article.id]);
    expect((await read(await reader.get(`/api/articles/${storm.id}/vote`))).body).toEqual({ likes: 8, dislikes: 1, vote: null });
    const views = async (slug: string) => (await read<Article>(await reader.get(`/api/articles/by-slug/${slug}`))).body.views;
    expect(await views(storm.slug)).toBe(4);
    expect(await views('central-bank-holds-rates-as-inflation-cools')).toBe(2);
    expect(await views('cafe-culture-returns-to-the-zurich-riverfront')).toBe(1);
  });

  it('finds the revisions, their body diff, and the corrections', async () => {
    for (const article of expected.articles) {
      const revisions = expected.revisions[article.id]!;
      const { body: list } = await read<RevisionSummary[]>(await admin.get(`/api/articles/${article.id}/revisions`));
      expect(list).toEqual(revisions.map(({ article: _snapshot, ...summary }) => summary));
      for (const revision of revisions) {
        expect((await read(await admin.get(`/api/articles/${article.id}/revisions/${revision.rev}`))).body).toMatchObject(revision);
      }
      expect((await read(await admin.get(`/api/articles/${article.id}/corrections`))).body).toEqual(expected.corrections[article.id]);
    }
    const { body: first } = await read<Revision>(await admin.get(`/api/articles/${storm.id}/revisions/1`));
    const { body: second } = await read<Revision>(await admin.get(`/api/articles/${storm.id}/revisions/2`));
    const added = diffBodies(first.article.bodyHtml, second.article.bodyHtml)
      .filter((part) => part.kind === 'added')
      .map((part) => part.text)
      .join('');
    expect(added).toContain('and pumps');
    expect(added).toContain('The new warning system sends alerts to phones within two minutes.');
    expect(storm.corrections).toHaveLength(2);
    const corrections = await page('/corrections');
    expect(corrections.status).toBe(200);
    for (const correction of storm.corrections!) expect(corrections.text).toContain(correction.text);
  });

  it('lets every user sign in with their password and keep their role; the disabled one stays out', async () => {
    for (const user of expected.users) {
      const client = new TestClient(server.url);
      const response = await client.post('/api/auth/login', { username: user.username, password: user.password });
      if (user.username === 'dexter') {
        await expectError(response, 403);
        continue;
      }
      expect(response.status, user.username).toBe(200);
      const { body } = await read<{ user: { id: string; role: string } }>(await client.get('/api/auth/me'));
      expect(body.user).toMatchObject({ id: expected.ids[user.username], role: user.role });
    }
    expect((await read(await admin.get('/api/users'))).body).toMatchObject(expected.userList);
  });

  it('finds the subscribers in their states, the last briefing, and the source', async () => {
    const { body } = await read(await admin.get('/api/newsletter/subscribers?pageSize=100'));
    expect(body).toMatchObject(expected.subscribers);
    expect(expected.subscribers.counts).toEqual({ confirmed: 2, pending: 1, unsubscribed: 1 });
    expect((await read(await admin.get('/api/news-sources'))).body).toMatchObject(expected.sources);
  });

  it('finds the audit log as 0.1.0 wrote it', async () => {
    const { body } = await read<{ items: AuditEntry[]; total: number }>(await admin.get('/api/audit?pageSize=100'));
    expect(body.total).toBe(23);
    expect(body.items).toEqual(expected.audit.items);
  });

  it('finds a published article by search', async () => {
    const { body } = await read<ArticleSummary[]>(await reader.get('/api/search?q=transistors'));
    expect(body).toMatchObject(expected.search);
    expect(body.map((a) => a.slug)).toEqual(['chip-makers-race-to-build-smaller-transistors']);
  });

  it('restores the trashed article with its slug, and serves it again', async () => {
    const { body: trash } = await read<TrashItem[]>(await admin.get('/api/trash'));
    expect(trash).toHaveLength(1);
    const { deletedAt: _old, purgeAt: _purge, ...entry } = trashed;
    expect(trash[0]).toMatchObject({ ...entry, deletedAt });
    const { status, body: restored } = await read<Article>(await admin.post(`/api/trash/${trashed.id}/restore`));
    expect(status).toBe(200);
    expect(restored).toMatchObject({ id: trashed.id, slug: trashed.slug, status: 'published' });
    await waitForIdleQueue(server.url);
    const restoredPage = await page(`/article/${trashed.slug}`);
    expect(restoredPage.status).toBe(200);
    expect(restoredPage.text).toContain(trashed.title);
  });

  it('keeps working on the old records: a save with the old version, a stale one, a new vote', async () => {
    const saved = await admin.request('PUT', `/api/articles/${storm.id}`, {
      json: { dek: 'After the upgrade.' },
      headers: { 'If-Match': '"4"' },
    });
    expect(saved.status).toBe(200);
    expect(saved.headers.get('etag')).toBe('"5"');
    await expectError(
      await admin.request('PUT', `/api/articles/${storm.id}`, { json: { dek: 'Stale.' }, headers: { 'If-Match': '"4"' } }),
      409,
    );
    const { body: vote } = await read<{ likes: number }>(await new TestClient(server.url).post(`/api/articles/${storm.id}/like`));
    expect(vote.likes).toBe(9);
    const { body: revisions } = await read<RevisionSummary[]>(await admin.get(`/api/articles/${storm.id}/revisions`));
    expect(revisions.map((r) => r.rev)).toEqual([5, 4, 3, 2, 1]);
  });
});
