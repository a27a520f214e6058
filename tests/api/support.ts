/** Shared pieces of the API tests: a server per file, clients with their own client IP, fixtures over HTTP. */
import fs from 'node:fs';
import { expect } from 'vitest';
import { ADMIN, ApiClient, startServer, type TestServer } from '../helpers/server.ts';
import type { Article, ArticleInput } from '../../src/schemas/article.ts';
import type { PublishingStatus } from '../../src/schemas/publishing.ts';
import { readCollectionDocument, storeJsonFiles } from '../../src/store/lowdb/inspect.ts';
import { createPool, type Db } from '../../src/store/pg/db.ts';
import { readPgDocument } from '../../src/store/pg/transfer.ts';
import { databaseFor, testingPostgres } from '../helpers/postgres.ts';

export { ADMIN };

/**
 * Starts the built server with TRUST_PROXY so each client can present its own address: the rate
 * limits are per IP, and one test exhausting a window must not throttle the next one.
 */
export function startApiServer(env: Record<string, string> = {}): Promise<TestServer> {
  return startServer({ env: { TRUST_PROXY: 'true', ...env } });
}

let nextIp = 1;

/** A client that sends X-Forwarded-For with an address of its own (a fresh one unless given). */
export class TestClient extends ApiClient {
  readonly ip: string;

  constructor(baseUrl: string, ip = `10.0.${Math.floor(nextIp / 250)}.${(nextIp++ % 250) + 1}`) {
    super(baseUrl);
    this.ip = ip;
  }

  override request(method: string, pathname: string, options: { json?: unknown; body?: BodyInit; headers?: Record<string, string> } = {}) {
    return super.request(method, pathname, { ...options, headers: { 'X-Forwarded-For': this.ip, ...options.headers } });
  }
}

/** A signed-in admin client. */
export async function adminClient(server: TestServer): Promise<TestClient> {
  const client = new TestClient(server.url);
  await client.login(ADMIN.username, ADMIN.password);
  return client;
}

/** Creates an article through the API (as admin) and answers it. */
export async function createArticle(admin: ApiClient, input: Partial<ArticleInput> & { title: string }): Promise<Article> {
  const response = await admin.post('/api/articles', { bodyHtml: '<p>Body text.</p>', ...input });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as Article;
}

/** Answers the status and parsed JSON body of a response. */
// The body is unknown JSON until the caller names the shape it reads: read<Shape>(response).
export async function read<T = unknown>(response: Response): Promise<{ status: number; body: T }> {
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** Asserts the API's error shape and status. */
export async function expectError(
  response: Response,
  status: number,
  message?: RegExp,
): Promise<{ error: string; issues?: { path: (string | number)[]; message: string }[] }> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const body = JSON.parse(text) as { error: string; issues?: { path: (string | number)[]; message: string }[] };
  expect(typeof body.error).toBe('string');
  if (message) expect(body.error).toMatch(message);
  return body;
}

/**
 * Every JSON file of the store in DATA_DIR (article files and buckets too) must parse (atomic writes,
 * no half-written files). On PostgreSQL (TEST_STORE=pg) the store keeps no files: transactions are its guarantee.
 */
export function expectDataFilesValid(dataDir: string): void {
  if (testingPostgres()) return;
  const files = storeJsonFiles(dataDir);
  expect(files.length).toBeGreaterThan(0);
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    expect(() => JSON.parse(text), file).not.toThrow();
  }
}

/** Runs `work` on the test database of a server's DATA_DIR (TEST_STORE=pg), read directly, not through the server. */
export async function withTestDatabase<T>(dataDir: string, work: (db: Db) => Promise<T>): Promise<T> {
  const db = createPool(await databaseFor(dataDir), false);
  try {
    return await work(db);
  } finally {
    await db.end();
  }
}

/**
 * Reads one collection of the server's store as one document (`{ articles: [...] }`, `{ votes, tallies }`, ...):
 * from its files in DATA_DIR, or from its database with TEST_STORE=pg.
 */
export async function readDataFile<T = unknown>(dataDir: string, name: string): Promise<T> {
  if (testingPostgres()) return withTestDatabase(dataDir, async (db) => (await readPgDocument(db, name)) as T);
  return readCollectionDocument(dataDir, name) as T;
}

/**
 * Polls `check` every 20 ms until it answers a value, and returns it. The deadline only stops a
 * hung test with the name of what it waited for; no test asserts how long the wait took.
 */
export async function waitFor<T>(
  what: string | (() => string),
  check: () => Promise<T | undefined | false>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits until the regeneration queue is empty and no reconcile is under way (GET /api/health reports both). */
export async function waitForIdleQueue(baseUrl: string, timeoutMs = 30_000): Promise<void> {
  let left = { jobs: -1, reconciling: -1 };
  await waitFor(
    () => `an idle regeneration worker (${left.jobs} jobs and ${left.reconciling} pages to reconcile left after ${timeoutMs} ms)`,
    async () => {
      left = (await (await fetch(new URL('/api/health', baseUrl))).json()) as typeof left;
      return left.jobs === 0 && left.reconciling === 0;
    },
    timeoutMs,
  );
}

/**
 * Waits until the server's publishing is quiet (GET /api/publishing, as an admin or editor): no page
 * job waiting or rendering, no search job queued or building (this server's own ones too), no reconcile.
 * What a change set off has then all run, and a test may assert what did not happen.
 */
export async function waitForQuietPublishing(client: ApiClient, timeoutMs = 60_000): Promise<void> {
  let status: PublishingStatus | undefined;
  await waitFor(
    () => `quiet publishing (last seen: ${JSON.stringify(status && { ...status, recent: undefined })})`,
    async () => {
      status = (await read<PublishingStatus>(await client.get('/api/publishing'))).body;
      return status.waiting === 0 && status.renderingNow.length === 0 && status.search.state === 'idle' && status.reconciling === 0;
    },
    timeoutMs,
  );
}

/**
 * Waits out the end of the UTC day when fewer than `minutes` of it are left, for tests that name
 * today's search bundles: a day that changes under them (a run across midnight) changes every name.
 */
export async function clearOfMidnight(minutes = 10): Promise<void> {
  const now = Date.now();
  const midnight = Math.ceil(now / 86_400_000) * 86_400_000;
  if (midnight - now < minutes * 60_000) await new Promise((resolve) => setTimeout(resolve, midnight - now + 2_000));
}
