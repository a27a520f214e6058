/** Shared pieces of the hardening suite: servers with their own data, data snapshots, raw requests and a headless Chromium. */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { expect } from 'vitest';
import { chromium, type Browser, type Page, type Request } from 'playwright-core';
import { startServer, type TestServer } from '../helpers/server.ts';
import { testingPostgres } from '../helpers/postgres.ts';
import { withTestDatabase } from '../api/support.ts';
import { DOCUMENT_NAMES as PG_COLLECTIONS, readPgDocument } from '../../src/store/pg/transfer.ts';
import { storeJsonFiles } from '../../src/store/lowdb/inspect.ts';

export { ADMIN, ApiClient, makeDataDir, startServer, type TestServer } from '../helpers/server.ts';
export {
  TestClient,
  adminClient,
  createArticle,
  expectDataFilesValid,
  expectError,
  read,
  readDataFile,
  waitForIdleQueue,
} from '../api/support.ts';

/** Moves every stored session's expiry to `expiresAt`, behind the (stopped) server's back: in its files, or its database. */
export async function ageSessions(dataDir: string, expiresAt: string): Promise<void> {
  if (testingPostgres()) {
    await withTestDatabase(dataDir, (db) =>
      db.query(`UPDATE sessions SET expires_at = $1, doc = jsonb_set(doc, '{expiresAt}', to_jsonb($1::text))`, [expiresAt]),
    );
    return;
  }
  // Sessions live in hashed bucket files (layout 2): age the ones in each.
  for (const file of storeJsonFiles(dataDir).filter((f) => f.includes(`${path.sep}sessions${path.sep}`))) {
    const bucket = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, { expiresAt: string }>;
    for (const session of Object.values(bucket)) session.expiresAt = expiresAt;
    fs.writeFileSync(file, JSON.stringify(bucket));
  }
}

/** The built server with TRUST_PROXY, so each simulated client can present its own address. */
export function startHardenedServer(env: Record<string, string> = {}, dataDir?: string): Promise<TestServer> {
  return startServer({ ...(dataDir ? { dataDir } : {}), env: { TRUST_PROXY: 'true', ...env } });
}

/**
 * Every file under DATA_DIR (the lock aside) with a hash of its bytes, and on PostgreSQL
 * (TEST_STORE=pg) a hash of each collection in the database: two snapshots are equal exactly when
 * nothing in the store, the uploads or the images changed.
 */
export async function snapshotDataDir(dataDir: string): Promise<Record<string, string>> {
  // The server's own background writes (a finished job leaves the queue's file a moment after the
  // queue reports empty) must not read as a change: the folder is read until it holds still.
  let previous = await readDataDir(dataDir);
  for (let i = 0; i < 40; i++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const current = await readDataDir(dataDir);
    const settled = !Object.keys(current).some((file) => file.endsWith('.tmp'));
    if (settled && JSON.stringify(current) === JSON.stringify(previous)) return current;
    previous = current;
  }
  return previous;
}

/**
 * A file's bytes, or undefined when it went between the listing and the read (a temp file renamed
 * into place): the next reading shows the write it belonged to.
 */
function readIfThere(file: string): Buffer | undefined {
  try {
    return fs.readFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function readDataDir(dataDir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name !== '.lock') {
        const bytes = readIfThere(full);
        if (bytes) out[path.relative(dataDir, full)] = createHash('sha256').update(bytes).digest('hex');
      }
    }
  };
  walk(dataDir);
  if (testingPostgres()) {
    await withTestDatabase(dataDir, async (db) => {
      for (const name of PG_COLLECTIONS)
        out[`pg:${name}`] = createHash('sha256')
          .update(JSON.stringify(await readPgDocument(db, name)))
          .digest('hex');
    });
  }
  return out;
}

export type RawRequest = { method: string; path: string; headers?: Record<string, string>; body?: Uint8Array<ArrayBuffer> | string };

/** Sends a request exactly as given (any bytes as body, any content type); answers status, headers and text. */
export async function send(baseUrl: string, request: RawRequest): Promise<{ status: number; headers: Headers; text: string }> {
  const headers: Record<string, string> = { Origin: baseUrl, ...request.headers };
  const response = await fetch(new URL(request.path, baseUrl), {
    method: request.method,
    headers,
    body: request.body === undefined ? null : request.body,
    redirect: 'manual',
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** Waits for a file the server writes on its own (pages regenerated after start). */
export async function waitForFile(file: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!fs.existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`${file} did not appear in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Answers once the server is still up and serving: a process alive and a health check that passes. */
export async function expectServerUp(server: TestServer): Promise<void> {
  expect(server.process.exitCode, server.output()).toBeNull();
  const response = await fetch(new URL('/api/health', server.url));
  expect(response.status).toBe(200);
  expect(server.output()).not.toMatch(/\[api\] unexpected error|\[server\] handler failed/);
}

/** A plain TCP connection to the server, for clients that misbehave below HTTP (slow headers, trickled bodies). */
export function openSocket(baseUrl: string): Promise<net.Socket> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port) }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Everything the server sent on a socket until it closed it, and when that was (ms after the call). */
export function readUntilClosed(socket: net.Socket, limitMs: number): Promise<{ data: string; closedAfterMs: number | undefined }> {
  const started = Date.now();
  return new Promise((resolve) => {
    let data = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ data, closedAfterMs: undefined });
    }, limitMs);
    socket.on('data', (chunk) => (data += chunk.toString('latin1')));
    socket.on('error', () => {});
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ data, closedAfterMs: Date.now() - started });
    });
  });
}

/** Debian's Chromium, headless, as the e2e suite runs it. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
      '--disable-quic',
    ],
  });
}

/** Each tracked page's requests to its own server not answered yet, and how many it has started or seen end. */
const traffic = new WeakMap<Page, { open: Set<Request>; events: number }>();

/**
 * Counts the requests to `baseUrl` of `page`'s context from now on (its islands' calls, the images its
 * markup names, its web workers' fetches: context-wide), for pageSettled. One page per context.
 */
export function trackRequests(page: Page, baseUrl: string): Page {
  const origin = new URL(baseUrl).origin;
  const state = { open: new Set<Request>(), events: 0 };
  const context = page.context();
  context.on('request', (request) => {
    if (!request.url().startsWith(`${origin}/`)) return;
    state.open.add(request);
    state.events++;
  });
  const ended = (request: Request) => {
    if (state.open.delete(request)) state.events++;
  };
  context.on('requestfinished', ended);
  context.on('requestfailed', ended);
  traffic.set(page, state);
  return page;
}

/**
 * Waits until a page tracked by trackRequests has no request to its server in flight, and two frames
 * and a task have passed since without one starting or ending: what its scripts asked for has arrived
 * and been handled, and the events that follow (an image's error, a focus, a toggle) have fired.
 * Not Playwright's networkidle, which waits out 500 ms of quiet after the last request.
 */
export async function pageSettled(page: Page, timeoutMs = 15_000): Promise<void> {
  const state = traffic.get(page);
  if (!state) throw new Error('pageSettled needs a page passed to trackRequests');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = state.events;
    const quiet = state.open.size === 0;
    await page.evaluate(
      () => new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(resolve)))),
    );
    if (quiet && state.open.size === 0 && state.events === events) return;
    if (Date.now() > deadline)
      throw new Error(`Timed out waiting for the page's requests: ${[...state.open].map((request) => request.url()).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

let nextIp = 1;
/** A fresh client address for X-Forwarded-For (rate limits are per IP). */
export function freshIp(): string {
  const n = nextIp++;
  return `198.18.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`;
}
