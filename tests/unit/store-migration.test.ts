/**
 * Migration of a DATA_DIR in layout 1 (one file per collection, written by the previous store code:
 * tests/fixtures/store-layout-1) to layout 2, including runs killed with SIGKILL halfway.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.ts';
import { LAYOUT_FILE, articleFile, listJsonFiles } from '../../src/store/lowdb/layout.ts';
import { LEGACY_FILES, LEGACY_FOLDER } from '../../src/store/lowdb/migrate.ts';
import { closeQuietly, makeTempDir } from './support.ts';

const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/store-layout-1');
const STORE_MODULE = pathToFileURL(path.resolve(import.meta.dirname, '../../src/store/index.ts')).href;

type Legacy = {
  articles: { version: number; articles: Array<{ id: string } & Record<string, unknown>> };
  votes: { votes: Record<string, Record<string, 'like' | 'dislike'>>; tallies: Record<string, { likes: number; dislikes: number }> };
  counters: { views: Record<string, number> };
  comments: { comments: Array<{ id: string } & Record<string, unknown>> };
  subscribers: { subscribers: Array<{ email: string; unsubscribedAt?: string } & Record<string, unknown>> };
  sessions: { sessions: Record<string, Record<string, unknown>> };
  jobs: { jobs: Array<Record<string, unknown>> };
  users: { users: Array<{ id: string } & Record<string, unknown>> };
  sources: { sources: unknown[] };
  meta: Record<string, unknown>;
};

const legacy = <K extends keyof Legacy>(name: K): Legacy[K] =>
  JSON.parse(fs.readFileSync(path.join(FIXTURE, `${name}.json`), 'utf8')) as Legacy[K];

function copyFixture(): string {
  const dir = makeTempDir('meridian-migration-');
  fs.cpSync(FIXTURE, dir, { recursive: true, filter: (source) => !source.endsWith('README.md') });
  return dir;
}

let store: Store | undefined;
afterEach(async () => {
  await closeQuietly(store);
  store = undefined;
});

/** Every record of the fixture, read back through the Store API of the migrated folder. */
async function expectEveryRecord(s: Store): Promise<void> {
  const { articles, version } = legacy('articles');
  expect(await s.articles.count({})).toBe(articles.length);
  for (const article of articles) expect(await s.articles.get(article.id), article.id).toEqual(article);
  expect(await s.articles.version()).toBe(version);

  const { votes, tallies } = legacy('votes');
  const { views } = legacy('counters');
  let voteCount = 0;
  for (const [articleId, byVisitor] of Object.entries(votes)) {
    for (const [visitorId, kind] of Object.entries(byVisitor)) {
      expect(await s.counters.visitorVote(articleId, visitorId)).toBe(kind);
      voteCount++;
    }
  }
  expect(voteCount).toBeGreaterThan(250);
  for (const id of new Set([...Object.keys(tallies), ...Object.keys(views)])) {
    expect(await s.counters.get(id), id).toEqual({
      likes: tallies[id]?.likes ?? 0,
      dislikes: tallies[id]?.dislikes ?? 0,
      views: views[id] ?? 0,
    });
  }

  const { comments } = legacy('comments');
  expect(await s.comments.count({})).toBe(comments.length);
  for (const comment of comments) expect(await s.comments.get(comment.id)).toEqual(comment);
  // Newest first, as before.
  const listed = (await s.comments.list({}, { offset: 0, limit: 100 })).map((c) => c.createdAt);
  expect(listed).toEqual([...listed].sort().reverse());

  const { subscribers } = legacy('subscribers');
  for (const subscriber of subscribers) expect(await s.subscribers.getByEmail(subscriber.email)).toEqual(subscriber);
  expect(await s.subscribers.count()).toBe(subscribers.filter((x) => !x.unsubscribedAt).length);

  for (const [id, session] of Object.entries(legacy('sessions').sessions)) expect(await s.sessions.get(id)).toEqual(session);
  // The queue keeps its order (the failed job last) and new ids carry on past the old ones.
  expect(await s.jobs.list(100)).toEqual(legacy('jobs').jobs);

  for (const user of legacy('users').users) expect(await s.users.get(user.id)).toEqual(user);
  expect(await s.sources.list()).toEqual(legacy('sources').sources);
  for (const [key, value] of Object.entries(legacy('meta'))) expect(await s.meta.get(key)).toEqual(value);
}

/** The layout-1 files, moved aside unchanged once the migration is complete. */
function expectLegacyAside(dir: string): void {
  for (const name of LEGACY_FILES) {
    expect(fs.existsSync(path.join(dir, `${name}.json`)), `${name}.json still in place`).toBe(false);
    expect(fs.readFileSync(path.join(dir, LEGACY_FOLDER, `${name}.json`), 'utf8')).toBe(
      fs.readFileSync(path.join(FIXTURE, `${name}.json`), 'utf8'),
    );
  }
}

/** Opens the store in a real child process that pauses the migration at `point`, then SIGKILLs it there. */
async function killMigrationAt(dir: string, point: string): Promise<void> {
  const script = `const { openStore } = await import(${JSON.stringify(STORE_MODULE)}); await openStore(${JSON.stringify(dir)}); console.log('opened');`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, MERIDIAN_MIGRATION_PAUSE: point },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(`migration paused at ${point}`)) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the migration did not pause at ${point} (exit ${code}): ${output}`)));
  });
  child.kill('SIGKILL');
  await exited;
}

describe('migration from layout 1', () => {
  it('moves every record into layout 2 at start, and keeps the old files aside', async () => {
    const dir = copyFixture();
    store = await openStore(dir);
    await expectEveryRecord(store);
    expect(JSON.parse(fs.readFileSync(path.join(dir, LAYOUT_FILE), 'utf8'))).toMatchObject({ layout: 2 });
    expectLegacyAside(dir);
    expect(fs.existsSync(articleFile(dir, 'legacy/7 id'))).toBe(true);
    // Writes after the migration carry on: a new job gets an id past the old ones.
    await store.jobs.enqueue(['/new'], '2025-06-01T00:00:00.000Z');
    const ids = (await store.jobs.list(100)).map((j) => Number(j.id));
    expect(ids.at(-1)).toBeGreaterThan(Math.max(...ids.slice(0, -1)));
    await store.close();
    // A second start has nothing left to migrate and reads the same records.
    store = await openStore(dir);
    expect(await store.jobs.size()).toBe(legacy('jobs').jobs.length + 1);
    expect(await store.articles.count({})).toBe(legacy('articles').articles.length);
  });

  it('a read-only open (a build) migrates a layout-1 folder under the lock too', async () => {
    const dir = copyFixture();
    store = await openStore(dir, 'read');
    await expectEveryRecord(store);
    expect(fs.existsSync(path.join(dir, '.lock'))).toBe(false);
    expectLegacyAside(dir);
  });

  it('killed with SIGKILL while writing articles, the next start migrates again and loses nothing', async () => {
    const dir = copyFixture();
    await killMigrationAt(dir, 'articles:10');
    // Halfway: some article files, no commit marker, the layout-1 files untouched.
    expect(fs.existsSync(path.join(dir, LAYOUT_FILE))).toBe(false);
    const partial = listJsonFiles(path.join(dir, 'articles')).length;
    expect(partial).toBeGreaterThanOrEqual(10);
    for (const name of LEGACY_FILES)
      expect(fs.readFileSync(path.join(dir, `${name}.json`), 'utf8')).toBe(fs.readFileSync(path.join(FIXTURE, `${name}.json`), 'utf8'));
    store = await openStore(dir);
    await expectEveryRecord(store);
    expectLegacyAside(dir);
  });

  it('killed after writing every bucket but before the commit marker, the next start migrates again', async () => {
    const dir = copyFixture();
    await killMigrationAt(dir, 'commit');
    expect(fs.existsSync(path.join(dir, LAYOUT_FILE))).toBe(false);
    // An article deleted from layout 1 meanwhile would be a stale partial file: the rerun clears them first.
    fs.mkdirSync(path.dirname(articleFile(dir, 'stale-partial')), { recursive: true });
    fs.writeFileSync(articleFile(dir, 'stale-partial'), JSON.stringify({ id: 'stale-partial' }));
    store = await openStore(dir);
    await expectEveryRecord(store);
    expect(await store.articles.get('stale-partial')).toBeUndefined();
  });

  it('killed after the commit, while moving the old files aside, the next start finishes the move', async () => {
    const dir = copyFixture();
    await killMigrationAt(dir, 'aside:votes');
    expect(fs.existsSync(path.join(dir, LAYOUT_FILE))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'comments.json'))).toBe(true);
    store = await openStore(dir);
    await expectEveryRecord(store);
    expectLegacyAside(dir);
  });
});
