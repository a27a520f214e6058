/** The server as a whole: health, unknown /api paths, methods, and one process per DATA_DIR. */
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, makeDataDir, makeOutDir, siteCopyFor, startServer, type TestServer } from '../helpers/server.ts';
import {
  TestClient,
  adminClient,
  createArticle,
  expectDataFilesValid,
  expectError,
  read,
  startApiServer,
  waitForIdleQueue,
} from './support.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startApiServer();
});

afterAll(async () => {
  await server?.stop();
});

/** The error a server start fails with (undefined, after stopping it, if it started after all). */
function startupError(options: Parameters<typeof startServer>[0]): Promise<Error | undefined> {
  return startServer(options).then(
    async (started) => {
      await started.stop();
      return undefined;
    },
    (e: Error) => e,
  );
}

/** `npm start` (scripts/start.ts) with `env`, run to its end. */
function npmStart(env: Record<string, string>) {
  return spawnSync(process.execPath, [path.join(ROOT, 'scripts/start.ts')], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('GET /api/health', () => {
  it('answers ok with the queue depth, the pages a reconcile has left and the pages queued per publish', async () => {
    await waitForIdleQueue(server.url);
    const { status, body } = await read(await new TestClient(server.url).get('/api/health'));
    expect(status).toBe(200);
    const count = expect.any(Number);
    expect(body).toEqual({
      ok: true,
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      jobs: count,
      reconciling: 0,
      publishing: { batches: count, pagesQueued: count, lastBatchPages: count, maxBatchPages: count },
    });
  });

  it('answers HEAD like GET, without a body', async () => {
    const response = await new TestClient(server.url).request('HEAD', '/api/health');
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
  });
});

describe('unknown /api paths', () => {
  it('answer 404 JSON for every method', async () => {
    const client = new TestClient(server.url);
    for (const [method, path] of [
      ['GET', '/api/nope'],
      ['GET', '/api/articles/some-id/unknown'],
      ['POST', '/api/admin/anything'],
      ['DELETE', '/api/a/b/c/d'],
      ['GET', '/api/comments'],
    ] as const) {
      const error = await expectError(await client.request(method, path), 404);
      expect(error.error).toContain(path);
    }
  });

  it('answer 404 JSON, not a 500, for paths with broken percent-encoding', async () => {
    const client = new TestClient(server.url);
    await expectError(await client.get('/api/articles/%ZZ'), 404);
    await expectError(await client.get('/api/articles/by-slug/%E0%A4%A'), 404);
    await expectError(await client.post('/api/articles/%ZZ/like'), 404);
  });

  it('answer 405 with Allow for a known path and another method', async () => {
    const response = await new TestClient(server.url).request('PUT', '/api/auth/me');
    await expectError(response, 405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('the DATA_DIR lock', () => {
  it('refuses a second server on the same DATA_DIR with exit code 2 and a clear message', async () => {
    // A served folder of its own, so it is the DATA_DIR lock (not the served-folder lock) that refuses it.
    const error = await startupError({ dataDir: server.dataDir, env: { SERVE_DIR: siteCopyFor(makeDataDir()) } });
    expect(error).toBeInstanceOf(Error);
    expect(error!.message).toMatch(/exited with code 2/);
    expect(error!.message).toMatch(/Cannot start: Another process \(pid \d+\) is using the data folder/);
    // The first server is unaffected.
    expect((await new TestClient(server.url).get('/api/health')).status).toBe(200);
  });

  it('lets a new server take over after a crash (stale locks of the data and the served folder)', async () => {
    const crashing = await startApiServer();
    await crashing.kill();
    const next = await startServer({ dataDir: crashing.dataDir });
    try {
      expect((await new TestClient(next.url).get('/api/health')).status).toBe(200);
    } finally {
      await next.stop();
    }
  });
});

it('keeps the data files valid JSON', () => {
  expectDataFilesValid(server.dataDir);
});

describe('the served-folder lock', () => {
  it('refuses a second server on the same served folder (exit code 2, names the folder and SERVE_DIR), before it opens any data', async () => {
    const otherData = makeDataDir();
    const error = await startupError({ dataDir: otherData, env: { SERVE_DIR: server.clientDir } });
    expect(error).toBeInstanceOf(Error);
    expect(error!.message).toMatch(/exited with code 2/);
    expect(error!.message).toContain(`Cannot start: ${server.clientDir} is served by another server (pid ${server.process.pid})`);
    expect(error!.message).toContain('SERVE_DIR=');
    expect(fs.readdirSync(otherData)).toEqual([]);
    expect((await new TestClient(server.url).get('/api/health')).status).toBe(200);
  });

  it('`npm start` on a served folder refuses before it builds anything', async () => {
    const outDir = makeOutDir('serve-lock-');
    const child = npmStart({ OUT_DIR: outDir, SERVE_DIR: server.clientDir, DATA_DIR: makeDataDir(), PORT: '0', HOST: '127.0.0.1' });
    expect(child.status, child.stdout + child.stderr).toBe(2);
    expect(child.stderr).toContain(`${server.clientDir} is served by another server`);
    expect(fs.readdirSync(outDir)).toEqual([]);
    fs.rmSync(outDir, { recursive: true, force: true });
  });
});

describe('a port already in use', () => {
  const portOf = (url: string) => new URL(url).port;

  it('`npm run serve` says which port is taken (exit code 2, no stack) and frees the data folder', async () => {
    const dataDir = makeDataDir();
    const error = await startupError({ dataDir, env: { PORT: portOf(server.url) } });
    expect(error).toBeInstanceOf(Error);
    expect(error!.message).toMatch(/exited with code 2/);
    expect(error!.message).toContain(`Cannot start: port ${portOf(server.url)} on 127.0.0.1 is already in use`);
    expect(error!.message).toContain('PORT=');
    expect(error!.message).not.toMatch(/EADDRINUSE|\n\s+at /);
    // The data folder's lock went with it: a server on a free port takes the same folder.
    const next = await startServer({ dataDir });
    await next.stop();
    expect((await new TestClient(server.url).get('/api/health')).status).toBe(200);
  });

  it('`npm start` on a taken port refuses before it builds anything', async () => {
    const outDir = makeOutDir('port-taken-');
    const dataDir = makeDataDir();
    const child = npmStart({ OUT_DIR: outDir, DATA_DIR: dataDir, PORT: portOf(server.url), HOST: '127.0.0.1' });
    expect(child.status, child.stdout + child.stderr).toBe(2);
    expect(child.stderr).toContain(`Cannot start: port ${portOf(server.url)} on 127.0.0.1 is already in use`);
    expect(child.stderr).not.toContain('EADDRINUSE');
    expect(fs.readdirSync(outDir)).toEqual([]);
    expect(fs.readdirSync(dataDir)).toEqual([]);
    fs.rmSync(outDir, { recursive: true, force: true });
  });
});

// Last in the file: it stops the file's server (afterAll then finds it stopped).
describe('a stop (SIGTERM)', () => {
  it('lets a save in flight finish, queue its pages and be rendered after the restart, then exits 0', async () => {
    // The file's server, which no test needs after this one: a server of its own would cost a start.
    const own = server;
    const admin = await adminClient(own);
    const article = await createArticle(admin, { title: 'Before the stop', status: 'published' });
    await waitForIdleQueue(own.url);
    // A save whose body is still arriving when SIGTERM comes.
    const body = JSON.stringify({ title: 'Saved during the stop' });
    const cookie = [...admin.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const request = http.request(new URL(`/api/articles/${article.id}`, own.url), {
        method: 'PUT',
        headers: { Origin: own.url, Cookie: cookie, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      });
      request.on('response', (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      });
      request.on('error', reject);
      request.write(body.slice(0, 5));
      setTimeout(() => {
        own.process.kill('SIGTERM');
        setTimeout(() => request.end(body.slice(5)), 300);
      }, 100);
    });
    const exitCode = new Promise<number | null>((resolve) => own.process.once('exit', (code) => resolve(code)));
    const { status, text } = await answered;
    expect(status, text).toBe(200);
    expect(await exitCode).toBe(0);

    // Its pages were queued before the worker stopped: rendered then, or by the next start, which
    // runs the jobs left in the queue without re-checking every page.
    expect(own.output()).not.toContain('[publish] render manifest at stop');
    const next = await startServer({ dataDir: own.dataDir, env: { SERVE_DIR: own.clientDir } });
    try {
      await waitForIdleQueue(next.url);
      const page = await new TestClient(next.url).get(`/article/${article.slug}`);
      expect(await page.text()).toContain('Saved during the stop');
      expect(next.output()).not.toContain('[publish] reconciling');
    } finally {
      await next.stop();
    }
    // Two starts of a server and a stop: more than the default 30 s on a loaded machine with PostgreSQL.
  }, 90_000);
});
