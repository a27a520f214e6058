/**
 * `npm run backup` and `npm run restore` on the real server and store (lowdb, or PostgreSQL with
 * TEST_STORE=pg): a backup taken during a burst of saves, votes and comments holds every write
 * acknowledged before it started; a restore on a second data folder serves the same pages and search
 * results; a backup killed halfway leaves no archive; a damaged or foreign archive, or a target that
 * is not empty, is refused with one sentence and changes nothing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { create as createTar } from 'tar';
import { ROOT, copyLiveFolder, makeDataDir, startServer, type TestServer } from '../helpers/server.ts';
import { databaseFor, storeEnvFor, testingPostgres } from '../helpers/postgres.ts';
import { TestClient, adminClient, createArticle, read, startApiServer, waitFor, waitForIdleQueue, withTestDatabase } from './support.ts';
import type { Article } from '../../src/schemas/article.ts';
import type { Comment } from '../../src/schemas/comment.ts';
import { manifestFileFor, readRenderManifest } from '../../src/server/publishing/manifest.ts';

type ScriptRun = { code: number | null; stdout: string; stderr: string };

/** Runs scripts/NAME.ts on this Node with DATA_DIR (and, with TEST_STORE=pg, a database); `onStart` gets the child. */
function runScript(
  name: 'backup' | 'restore',
  args: string[],
  env: Record<string, string>,
  onStart?: (child: ChildProcess) => void,
): Promise<ScriptRun> {
  const child = spawn(process.execPath, [path.join(ROOT, `scripts/${name}.ts`), ...args], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  onStart?.(child);
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

/** The environment of a script on a server's store: its DATA_DIR and (PostgreSQL) its database. */
async function storeEnv(dataDir: string): Promise<Record<string, string>> {
  return { DATA_DIR: dataDir, ...(await storeEnvFor(dataDir)) };
}

/** A new, empty restore target: a data folder and, with TEST_STORE=pg, an empty database of its own. */
async function emptyTarget(): Promise<{ dataDir: string; env: Record<string, string> }> {
  const dataDir = makeDataDir('meridian-restore-');
  return { dataDir, env: await storeEnv(dataDir) };
}

/** A restore target that does not exist yet (inside a new folder), with an empty database of its own on PostgreSQL. */
async function absentTarget(): Promise<{ dataDir: string; env: Record<string, string> }> {
  const dataDir = path.join(makeDataDir('meridian-restore-'), 'data');
  return { dataDir, env: await storeEnv(dataDir) };
}

/** Whether a restore target is still as it was made: an empty folder, and an empty database. */
async function expectUntouched(target: { dataDir: string }): Promise<void> {
  expect(fs.readdirSync(target.dataDir)).toEqual([]);
  if (testingPostgres()) {
    const tables = await withTestDatabase(
      target.dataDir,
      async (db) => (await db.query(`SELECT 1 FROM pg_tables WHERE schemaname = 'public'`)).rowCount,
    );
    expect(tables).toBe(0);
  }
  // Nothing left beside it either (the temp folder a restore extracts into).
  expect(fs.readdirSync(path.dirname(target.dataDir)).filter((n) => n.startsWith(`.${path.basename(target.dataDir)}.restore-`))).toEqual(
    [],
  );
}

const SERVER_ENV = { RATE_LIMIT_FACTOR: '1000' };

/** The pages and search answers two servers must agree on. */
const PAGES = ['/section/world/', '/section/business/', '/rss.xml', '/sitemap.xml'];

async function pagesOf(server: TestServer, articles: readonly Article[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const page of [...PAGES, ...articles.map((a) => `/article/${a.slug}/`)]) {
    const response = await fetch(new URL(page, server.url));
    out[page] = `${response.status} ${await response.text()}`;
  }
  for (const query of ['harbour', 'markets storm', 'burst']) {
    const response = await fetch(new URL(`/api/search?q=${encodeURIComponent(query)}&limit=50`, server.url));
    out[`search:${query}`] = `${response.status} ${await response.text()}`;
  }
  return out;
}

let quietArchive: Promise<string> | undefined;

/** A backup of the original server once no write is under way (taken once, by whichever test asks first). */
function archiveOfQuietOriginal(): Promise<string> {
  quietArchive ??= (async () => {
    await waitForIdleQueue(original.url, 120_000);
    const file = path.join(archives, 'quiet.tar.gz');
    const backup = await runScript('backup', [file], await storeEnv(original.dataDir));
    expect(backup.code, backup.stdout + backup.stderr).toBe(0);
    return file;
  })();
  return quietArchive;
}

let original: TestServer;
let admin: TestClient;
let seeded: Article[];
const servers: TestServer[] = [];
const archives = makeDataDir('meridian-archives-');

beforeAll(async () => {
  original = await startApiServer(SERVER_ENV);
  admin = await adminClient(original);
  seeded = [];
  for (const [i, section] of (['world', 'business', 'world', 'business'] as const).entries()) {
    seeded.push(
      await createArticle(admin, {
        title: i % 2 ? `Markets steady after the storm ${i}` : `Harbour reopens after the storm ${i}`,
        status: 'published',
        section,
        tags: ['storm'],
        bodyHtml: `<p>Ships are back in the harbour by noon, report ${i}.</p>`,
      }),
    );
  }
});

afterAll(async () => {
  for (const server of [original, ...servers]) await server?.stop();
});

describe('npm run backup during a burst of writes, and npm run restore', () => {
  it('holds every write acknowledged before the backup started, and the restored site comes up with it', async () => {
    // A burst of saves, votes and comments, each noted with the moment its answer arrived.
    type Ack = { at: number; kind: 'save' | 'vote' | 'comment'; articleId: string; value: string };
    const acks: Ack[] = [];
    let stop = false;
    let n = 0;
    const writer = async (kind: Ack['kind']) => {
      while (!stop) {
        const i = n++;
        const article = seeded[i % seeded.length]!;
        if (kind === 'save') {
          const made = await createArticle(admin, { title: `Burst save ${i}`, status: 'published', section: 'world' });
          acks.push({ at: performance.now(), kind, articleId: made.id, value: made.title });
        } else if (kind === 'vote') {
          const visitor = new TestClient(original.url);
          const voted = await visitor.post(`/api/articles/${article.id}/like`);
          expect(voted.status).toBe(200);
          acks.push({ at: performance.now(), kind, articleId: article.id, value: visitor.cookies.get('vid')! });
        } else {
          const posted = await read<Comment>(
            await new TestClient(original.url).post(`/api/articles/${article.id}/comments`, {
              authorName: `Reader ${i}`,
              authorEmail: `reader${i}@example.com`,
              content: `Burst comment ${i}`,
            }),
          );
          expect(posted.status).toBe(201);
          acks.push({ at: performance.now(), kind, articleId: article.id, value: posted.body.id });
        }
      }
    };
    const burst = Promise.all([writer('save'), writer('vote'), writer('vote'), writer('comment')]);
    await waitFor('a few acknowledged writes', async () => acks.length >= 20);
    const file = path.join(archives, 'burst.tar.gz');
    const startedAt = performance.now();
    const backup = await runScript('backup', [file], await storeEnv(original.dataDir));
    stop = true;
    await burst;
    expect(backup.code, backup.stdout + backup.stderr).toBe(0);
    // lowdb: the server's own write gate held writes (the endpoint, in the Astro bundle, found the store's gate).
    expect(backup.stdout).toMatch(testingPostgres() ? /pg_dump/ : /the server held writes \d+ ms/);
    const before = acks.filter((a) => a.at < startedAt);
    expect(before.length).toBeGreaterThanOrEqual(20);
    // The burst went on while the backup ran: it was taken under writes.
    expect(acks.length).toBeGreaterThan(before.length);
    // The staging folder the server linked into is gone.
    expect(fs.readdirSync(original.dataDir).filter((n) => n.startsWith('.backup-'))).toEqual([]);

    const target = await emptyTarget();
    const restored = await runScript('restore', [file], target.env);
    expect(restored.code, restored.stdout + restored.stderr).toBe(0);
    expect(restored.stdout).toMatch(/Next: `npm start`/);
    const copy = await startServer({ dataDir: target.dataDir, env: { TRUST_PROXY: 'true', ...SERVER_ENV } });
    servers.push(copy);
    await waitForIdleQueue(copy.url, 120_000);
    const reader = new TestClient(copy.url);
    const comments = new Map<string, string[]>();
    for (const article of seeded)
      comments.set(
        article.id,
        (await read<Comment[]>(await reader.get(`/api/articles/${article.id}/comments`))).body.map((c) => c.id),
      );
    for (const ack of before) {
      if (ack.kind === 'save') {
        const saved = await read<Article>(await reader.get(`/api/articles/${ack.articleId}`));
        expect(saved.body.title, `save ${ack.value}`).toBe(ack.value);
        // Its page was rendered by the restored server.
        expect((await fetch(new URL(`/article/${saved.body.slug}/`, copy.url))).status).toBe(200);
      } else if (ack.kind === 'vote') {
        const visitor = new TestClient(copy.url);
        visitor.cookies.set('vid', ack.value);
        expect((await read<{ vote: string | null }>(await visitor.get(`/api/articles/${ack.articleId}/vote`))).body.vote).toBe('like');
      } else {
        expect(comments.get(ack.articleId), `comment ${ack.value}`).toContain(ack.value);
      }
    }
  }, 180_000);

  it('restores on a second data folder that serves the same pages and search results as the original', async () => {
    const file = await archiveOfQuietOriginal();
    // A DATA_DIR that does not exist yet (the burst test restores into an existing empty one).
    const target = await absentTarget();
    const restored = await runScript('restore', [file], target.env);
    expect(restored.code, restored.stdout + restored.stderr).toBe(0);
    // The copy serves a copy of the original's pages, whose render manifest names the store and version
    // backed up: the restored store has an id of its own, so it must not pass for them and renders again.
    const site = `${target.dataDir}-site`;
    await copyLiveFolder(path.dirname(original.clientDir), site, { filter: (source) => !source.endsWith('serve-lock') });
    const manifestFile = manifestFileFor(path.join(site, 'client'));
    const originalId = readRenderManifest(manifestFile)!.storeId;
    const copy = await startServer({
      dataDir: target.dataDir,
      env: { TRUST_PROXY: 'true', ...SERVER_ENV, SERVE_DIR: path.join(site, 'client') },
    });
    servers.push(copy);
    await waitForIdleQueue(copy.url, 120_000);
    expect(copy.output()).toMatch(/\[publish\] reconciling \d+ pages/);
    await waitFor('the copy to write its render manifest', async () => {
      return readRenderManifest(manifestFile)?.storeId !== originalId;
    });
    const first = await pagesOf(original, seeded);
    expect(first['search:harbour']).toMatch(/Harbour reopens/);
    expect(await pagesOf(copy, seeded)).toEqual(first);
  }, 180_000);

  it('leaves no archive at FILE when the backup is killed halfway, and the next backup cleans up after it', async () => {
    const file = path.join(archives, 'killed.tar.gz');
    let child: ChildProcess | undefined;
    let said = '';
    const killed = runScript('backup', [file], { ...(await storeEnv(original.dataDir)), MERIDIAN_BACKUP_PAUSE: 'archive' }, (c) => {
      child = c;
      c.stdout!.on('data', (chunk: Buffer) => (said += chunk.toString()));
    });
    // The hook says so once it holds the archive after its first compressed bytes.
    await waitFor(
      'the backup to pause halfway',
      async () =>
        said.includes('[backup] paused halfway through the archive') &&
        fs.readdirSync(archives).some((n) => n.startsWith('killed.tar.gz.') && n.endsWith('.partial')),
    );
    child!.kill('SIGKILL');
    await killed;
    expect(fs.existsSync(file)).toBe(false);
    const partial = fs.readdirSync(archives).find((n) => n.startsWith('killed.tar.gz.'))!;
    expect(partial).toMatch(/\.partial$/);
    // What it left does not pass for a backup.
    const target = await emptyTarget();
    const refused = await runScript('restore', [path.join(archives, partial)], target.env);
    expect(refused.code).toBe(2);
    await expectUntouched(target);
    fs.rmSync(path.join(archives, partial));
    // Its staging folder (lowdb: linked by the server; PostgreSQL: the dump and images) is removed by the next backup.
    const next = await runScript('backup', [path.join(archives, 'after-kill.tar.gz')], await storeEnv(original.dataDir));
    expect(next.code, next.stdout + next.stderr).toBe(0);
    expect(fs.readdirSync(original.dataDir).filter((n) => n.startsWith('.backup-'))).toEqual([]);
  }, 180_000);

  it('refuses a damaged or foreign archive with one sentence, exit code 2, and changes nothing', async () => {
    const good = await archiveOfQuietOriginal();
    const bytes = fs.readFileSync(good);
    const truncated = path.join(archives, 'truncated.tar.gz');
    fs.writeFileSync(truncated, bytes.subarray(0, Math.floor(bytes.length / 2)));
    const flipped = path.join(archives, 'flipped.tar.gz');
    const copy = Buffer.from(bytes);
    copy[Math.floor(copy.length / 2)]! ^= 0x55;
    fs.writeFileSync(flipped, copy);
    const foreignDir = makeDataDir('meridian-foreign-');
    fs.writeFileSync(path.join(foreignDir, 'notes.txt'), 'not a backup');
    const foreign = path.join(archives, 'foreign.tar.gz');
    await createTar({ gzip: true, file: foreign, cwd: foreignDir }, ['notes.txt']);
    const text = path.join(archives, 'text.txt');
    fs.writeFileSync(text, 'This is a text file, not an archive.\n');

    for (const [file, reason] of [
      [truncated, /damaged/],
      [flipped, /damaged/],
      [foreign, /not a Meridian backup/],
      [text, /damaged or not a backup archive/],
    ] as const) {
      const target = await emptyTarget();
      const result = await runScript('restore', [file], target.env);
      expect(result.code, `${path.basename(file)}: ${result.stdout}${result.stderr}`).toBe(2);
      const lines = result.stderr.trim().split('\n');
      expect(lines, result.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(reason);
      expect(lines[0]).toMatch(/^\[restore\] .+\.$/);
      await expectUntouched(target);
    }
  }, 180_000);

  it('refuses a target that is not empty and leaves it as it was', async () => {
    const file = await archiveOfQuietOriginal();
    // A folder with a store in it (lowdb), or a database with one (PostgreSQL).
    const dataDir = makeDataDir('meridian-restore-');
    fs.writeFileSync(path.join(dataDir, 'meta.json'), '{"storeId":"kept"}');
    const env: Record<string, string> = testingPostgres()
      ? { DATA_DIR: makeDataDir('meridian-restore-'), DATABASE_URL: await databaseFor(original.dataDir) }
      : { DATA_DIR: dataDir };
    const articlesBefore = (await read<{ count: number }>(await admin.get('/api/articles/count'))).body;
    const result = await runScript('restore', [file], env);
    expect(result.code, result.stdout + result.stderr).toBe(2);
    expect(result.stderr.trim()).toMatch(
      testingPostgres()
        ? /^\[restore\] The database at DATABASE_URL is not empty/
        : /is not empty: restore into a new or empty DATA_DIR\.$/,
    );
    expect(fs.readFileSync(path.join(dataDir, 'meta.json'), 'utf8')).toBe('{"storeId":"kept"}');
    expect((await read(await admin.get('/api/articles/count'))).body).toEqual(articlesBefore);
    // The running server's own folder is refused too (it holds the lock).
    const busy = await runScript('restore', [file], await storeEnv(original.dataDir));
    expect(busy.code).toBe(2);
  });
});
