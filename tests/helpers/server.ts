/** Starts the real built server (scripts/serve.ts) on a free port with its own DATA_DIR, for API and e2e tests. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_NODE_FLAGS, waitForListening } from '../../scripts/server-process.ts';
import { databaseFor, testingPostgres } from './postgres.ts';
import { recordServerOutput } from './server-logs.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const ADMIN = { username: 'admin', password: 'correct-horse-battery' } as const;
/** The SITE_URL of every test server and of the suite's build: pages and mails are made from it, whatever port serves them. */
export const TEST_SITE_URL = 'http://localhost:4321';

export type TestServer = {
  url: string;
  dataDir: string;
  /** The folder this server serves and regenerates pages into (its own copy of OUT_DIR/client). */
  clientDir: string;
  process: ChildProcess;
  /**
   * What the server logged so far, one message a line (the `msg` of each JSON line, and the error's
   * stack under it), as tests read it: `[publish] /article/x written in 3.1 ms`.
   */
  output: () => string;
  /** Everything the server printed so far, as printed (JSON lines). */
  rawOutput: () => string;
  /** SIGTERM and wait for exit. */
  stop: () => Promise<void>;
  /** SIGKILL (crash) and wait for exit. */
  kill: () => Promise<void>;
};

/** A fresh build output folder under .out/ (inside the project, where the bundle resolves its packages). */
export function makeOutDir(prefix: string): string {
  const parent = path.join(ROOT, '.out');
  fs.mkdirSync(parent, { recursive: true });
  return fs.mkdtempSync(path.join(parent, prefix));
}

export function makeDataDir(prefix = 'meridian-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * The served folder of a test server: a copy of the build's client folder beside its DATA_DIR, made
 * once and kept across restarts, so parallel servers never regenerate pages into the same files.
 */
export function siteCopyFor(dataDir: string): string {
  const site = `${dataDir.replace(/[\\/]+$/, '')}-site`;
  const clientDir = path.join(site, 'client');
  if (!fs.existsSync(clientDir)) {
    const outDir = path.resolve(ROOT, process.env.OUT_DIR ?? 'dist');
    fs.cpSync(path.join(outDir, 'client'), clientDir, { recursive: true });
    const state = path.join(outDir, 'render-state.json');
    if (fs.existsSync(state)) fs.copyFileSync(state, path.join(site, 'render-state.json'));
  }
  return clientDir;
}

/**
 * A copy of a served folder that a running server may still write to. Not fs.cpSync: its native
 * fast path ends the whole process (SIGABRT, a test file that "did not finish") when a folder goes
 * away mid-copy (nodejs/node#63970); fs.promises.cp throws ENOENT instead, and the copy starts over.
 */
export async function copyLiveFolder(from: string, to: string, options: { filter?: (source: string) => boolean } = {}): Promise<void> {
  const ATTEMPTS = 5;
  for (let attempt = 1; ; attempt++) {
    try {
      await fs.promises.cp(from, to, { recursive: true, ...options });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === ATTEMPTS) throw error;
      await fs.promises.rm(to, { recursive: true, force: true });
    }
  }
}

/**
 * Spawns the server and resolves once it prints its address. SEED defaults to `none` so tests
 * start from an empty store; pass { SEED: 'demo' } for demo content. With TEST_STORE=pg the server
 * gets a PostgreSQL database of its own, the same one again when restarted on the same DATA_DIR.
 */
export async function startServer(options: { dataDir?: string; env?: Record<string, string> } = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? makeDataDir();
  const clientDir = options.env?.SERVE_DIR ?? siteCopyFor(dataDir);
  const database = !options.env?.DATABASE_URL && testingPostgres() ? { DATABASE_URL: await databaseFor(dataDir) } : {};
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, path.join(ROOT, 'scripts/serve.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      SEED: 'none',
      // Production mode (scripts/serve.ts run directly) refuses to start without it.
      SITE_URL: TEST_SITE_URL,
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
      FETCH_ALLOW_PRIVATE_NETWORKS: 'true',
      // No scheduled briefing in tests unless one asks: after 07:00 it would write to DATA_DIR mid-test.
      BRIEFING_TIME: 'off',
      SERVE_DIR: clientDir,
      ...database,
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The run's log scan (scripts/test.ts) reads every server's output for secrets.
  recordServerOutput(child, `server-${path.basename(dataDir)}`);
  // Under the hook timeout (60 s): a loaded CI machine once took over 30 s to start one.
  // A server that never listens is killed, not left running (and writing) after its test has failed.
  const { url, output, exited } = await waitForListening(child, 55_000).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
  return {
    url,
    dataDir,
    clientDir,
    process: child,
    output: () => messagesOf(output()),
    rawOutput: output,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
    kill: async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Log output as readable lines: each JSON line's message (and its error's stack); other lines as they are. */
export function messagesOf(output: string): string {
  return output
    .split('\n')
    .map((line) => {
      if (!line.startsWith('{')) return line;
      try {
        const entry = JSON.parse(line) as { msg?: unknown; err?: { stack?: unknown } };
        const stack = typeof entry.err?.stack === 'string' ? `\n${entry.err.stack}` : '';
        return typeof entry.msg === 'string' ? `${entry.msg}${stack}` : line;
      } catch {
        return line;
      }
    })
    .join('\n');
}

/** A small HTTP client for API tests: same-origin Origin header, cookie jar, JSON bodies. */
export class ApiClient {
  readonly baseUrl: string;
  cookies = new Map<string, string>();

  constructor(baseUrl: string) {
    this.baseUrl = baseUrl;
  }

  async request(
    method: string,
    pathname: string,
    options: { json?: unknown; body?: BodyInit; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { Origin: this.baseUrl, ...options.headers };
    if (this.cookies.size) headers.Cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body = options.body;
    if (options.json !== undefined) {
      headers['Content-Type'] ??= 'application/json';
      body = JSON.stringify(options.json);
    }
    const response = await fetch(new URL(pathname, this.baseUrl), { method, headers, body: body ?? null, redirect: 'manual' });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const index = pair!.indexOf('=');
      const name = pair!.slice(0, index);
      const value = pair!.slice(index + 1);
      if (value === '' || /max-age=0/i.test(cookie)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  get(pathname: string, headers?: Record<string, string>) {
    return this.request('GET', pathname, headers ? { headers } : {});
  }
  post(pathname: string, json?: unknown) {
    return this.request('POST', pathname, json === undefined ? {} : { json });
  }
  put(pathname: string, json?: unknown) {
    return this.request('PUT', pathname, json === undefined ? {} : { json });
  }
  delete(pathname: string) {
    return this.request('DELETE', pathname);
  }

  /** Signs in as the test admin. */
  async login(username: string = ADMIN.username, password: string = ADMIN.password): Promise<void> {
    const response = await this.post('/api/auth/login', { username, password });
    if (response.status !== 200) throw new Error(`Login failed: ${response.status} ${await response.text()}`);
  }
}
