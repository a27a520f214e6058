/** Logs, metrics endpoints, health and readiness of the real built server: access lines, request ids, events, no secrets. */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, type TestServer } from '../helpers/server.ts';
import { findLeaks } from '../helpers/server-logs.ts';
import { testingPostgres } from '../helpers/postgres.ts';
import { createPool } from '../../src/store/pg/db.ts';
import { startApiServer, TestClient, read, waitFor } from './support.ts';

const METRICS_TOKEN = 'metrics-token-for-the-tests-0123';

/** One parsed log line of the server. */
type LogLine = Record<string, unknown> & { level: string; msg: string; reqId?: string };

/** The JSON lines the server wrote so far. */
function logLines(server: TestServer): LogLine[] {
  return server
    .rawOutput()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

/** Waits for a line matching `pick` (a request's access line is written once its answer is done). */
function lineFor(server: TestServer, what: string, pick: (line: LogLine) => boolean): Promise<LogLine> {
  return waitFor(`a log line with ${what}`, async () => logLines(server).find(pick), 5000);
}

let server: TestServer;
/** Every secret the tests hand the server or get from it: none may reach its log. */
const secrets = new Set<string>([ADMIN.password, METRICS_TOKEN]);

beforeAll(async () => {
  server = await startApiServer({ METRICS_TOKEN, METRICS_PORT: '0', LOG_LEVEL: 'info' });
});
afterAll(async () => {
  await server?.stop();
});

describe('access lines and request ids', () => {
  it('echoes a sane X-Request-Id and writes one access line with it: method, path, status, bytes, time, client', async () => {
    const client = new TestClient(server.url, '203.0.113.7');
    const response = await client.get('/api/health', { 'X-Request-Id': 'probe-1.a_B' });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('probe-1.a_B');
    const line = await lineFor(server, 'reqId probe-1.a_B', (l) => l.reqId === 'probe-1.a_B' && l.path === '/api/health');
    // The client address after TRUST_PROXY: the one the trusted proxy appended, not the socket's.
    expect(line).toMatchObject({ level: 'info', method: 'GET', path: '/api/health', status: 200, client: '203.0.113.7' });
    expect(line.bytes).toBeGreaterThan((await response.text()).length);
    expect(typeof line.ms).toBe('number');
    expect(typeof line.time).toBe('string');
  });

  it('makes an id when the request has none or an unusable one, for static files too', async () => {
    for (const sent of [undefined, 'has spaces', 'x'.repeat(129)]) {
      const response = await fetch(`${server.url}/section/world`, { headers: sent ? { 'X-Request-Id': sent } : {} });
      expect(response.status).toBe(200);
      const id = response.headers.get('x-request-id')!;
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const line = await lineFor(server, `reqId ${id}`, (l) => l.reqId === id);
      expect(line).toMatchObject({ path: '/section/world', status: 200 });
    }
  });

  it('logs paths without their query and with the upload token masked', async () => {
    const token = 'abcdefghijklmnopqrstuvwx';
    secrets.add(token).add('query-secret-value');
    await fetch(`${server.url}/newsletter/confirm?token=query-secret-value`, { headers: { 'X-Request-Id': 'query-1' } });
    await fetch(`${server.url}/api/images/upload/${token}?expires=1&sig=query-secret-value`, {
      method: 'PUT',
      headers: { 'X-Request-Id': 'upload-1', Origin: server.url },
      body: 'not an image',
    });
    expect((await lineFor(server, 'reqId query-1', (l) => l.reqId === 'query-1' && 'status' in l)).path).toBe('/newsletter/confirm');
    expect((await lineFor(server, 'reqId upload-1', (l) => l.reqId === 'upload-1' && 'status' in l)).path).toBe(
      '/api/images/upload/[token]',
    );
  });
});

describe('events in the log', () => {
  it('sign-in, failed sign-in, lock-out and sign-out, each with its request id; an unknown username is never written', async () => {
    const admin = new TestClient(server.url);
    await admin.request('POST', '/api/auth/login', {
      json: { username: ADMIN.username, password: ADMIN.password },
      headers: { 'X-Request-Id': 'login-ok' },
    });
    for (const cookie of admin.cookies.values()) secrets.add(cookie);
    expect(await lineFor(server, 'the sign-in', (l) => l.event === 'login' && l.reqId === 'login-ok')).toMatchObject({
      username: ADMIN.username,
    });

    const guesser = new TestClient(server.url);
    const typo = 'my-password-in-the-username-box';
    secrets.add(typo).add('wrong-password-1');
    await guesser.request('POST', '/api/auth/login', {
      json: { username: typo, password: 'wrong-password-1' },
      headers: { 'X-Request-Id': 'login-unknown' },
    });
    expect(await lineFor(server, 'the unknown user', (l) => l.event === 'login.failed' && l.reqId === 'login-unknown')).toMatchObject({
      userKnown: false,
      level: 'warn',
    });

    // 3 free failures, then the account is locked for a second: the next attempt is refused.
    let status = 0;
    for (let i = 0; i < 6 && status !== 429; i++) {
      const response = await guesser.request('POST', '/api/auth/login', {
        json: { username: ADMIN.username, password: 'wrong-password-1' },
        headers: { 'X-Request-Id': `guess-${i}` },
      });
      status = response.status;
    }
    expect(status).toBe(429);
    await lineFor(server, 'a failed sign-in of a known user', (l) => l.event === 'login.failed' && l.username === ADMIN.username);
    await lineFor(server, 'the lock-out', (l) => l.event === 'login.locked' && String(l.reqId).startsWith('guess-'));

    await admin.request('POST', '/api/auth/logout', { headers: { 'X-Request-Id': 'logout-1' } });
    await lineFor(server, 'the sign-out', (l) => l.event === 'logout' && l.reqId === 'logout-1' && l.username === ADMIN.username);
  });

  it('user changes (created, role, disabled, password reset) through the audit events, never the passwords', async () => {
    await waitFor(
      'the lock-out to pass',
      async () => {
        const client = new TestClient(server.url);
        return (await client.post('/api/auth/login', { username: ADMIN.username, password: ADMIN.password })).status === 200;
      },
      20_000,
    );
    const admin = new TestClient(server.url);
    await admin.login();
    for (const cookie of admin.cookies.values()) secrets.add(cookie);
    const created = await read<{ user: { id: string }; password: string }>(
      await admin.post('/api/users', { username: 'reporter', role: 'author' }),
    );
    expect(created.status).toBe(201);
    secrets.add(created.body.password);
    const id = created.body.user.id;
    await admin.request('PUT', `/api/users/${id}`, { json: { role: 'editor' }, headers: { 'X-Request-Id': 'role-1' } });
    const reset = await read<{ password: string }>(await admin.put(`/api/users/${id}`, { resetPassword: true }));
    secrets.add(reset.body.password);
    await admin.put(`/api/users/${id}`, { disabled: true });
    expect(await lineFor(server, 'the role change', (l) => l.event === 'user.role' && l.reqId === 'role-1')).toMatchObject({
      actor: ADMIN.username,
      detail: 'author -> editor',
    });
    await lineFor(server, 'the reset', (l) => l.event === 'user.password-reset');
    await lineFor(server, 'the disabling', (l) => l.event === 'user.disable');
    await lineFor(server, 'the creation', (l) => l.event === 'user.create');
  });

  it('a newsletter sign-up and its confirmation, with the address masked if at all', async () => {
    const email = 'reader.secret@example.org';
    secrets.add(email);
    const client = new TestClient(server.url);
    expect((await client.post('/api/newsletter/subscribe', { email })).status).toBe(200);
    const outbox = path.join(server.dataDir, 'outbox');
    const mail = fs.readdirSync(outbox).find((name) => name.includes(email))!;
    // The link as the mail carries it (quoted-printable may wrap it).
    const text = fs
      .readFileSync(path.join(outbox, mail), 'utf8')
      .replace(/=\r?\n/g, '')
      .replace(/=3D/g, '=');
    const token = /confirm\?token=([a-z2-7]+)/.exec(text)![1]!;
    secrets.add(token);
    expect((await fetch(`${server.url}/newsletter/confirm?token=${token}`)).status).toBe(200);
  });

  it('logs a 5xx with the request id of the request that failed', async () => {
    // The store fails under the request: the audit log cannot take the entry a user change writes.
    if (testingPostgres()) {
      const pool = createPool(await databaseUrlOf(server), false);
      await pool.query('ALTER TABLE audit RENAME TO audit_away');
      await pool.end();
    } else {
      const month = new Date().toISOString().slice(0, 7);
      fs.rmSync(path.join(server.dataDir, 'audit', `${month}.jsonl`), { force: true });
      fs.mkdirSync(path.join(server.dataDir, 'audit', `${month}.jsonl`), { recursive: true });
    }
    const admin = new TestClient(server.url);
    await admin.login();
    const response = await admin.request('POST', '/api/users', {
      json: { username: 'fails', role: 'author', password: 'fails-password-1' },
      headers: { 'X-Request-Id': 'boom-1' },
    });
    secrets.add('fails-password-1');
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ error: 'Internal server error' });
    const error = await lineFor(server, 'the unexpected error', (l) => l.msg === '[api] unexpected error' && l.reqId === 'boom-1');
    expect(error.level).toBe('error');
    expect((error.err as { message: string }).message).toBeTruthy();
    expect(await lineFor(server, 'the 500 access line', (l) => l.reqId === 'boom-1' && l.status === 500)).toMatchObject({ level: 'error' });
  });
});

/** The DATABASE_URL the test harness gave this server (TEST_STORE=pg). */
async function databaseUrlOf(of: TestServer): Promise<string> {
  const { databaseFor } = await import('../helpers/postgres.ts');
  return databaseFor(of.dataDir);
}

describe('/metrics', () => {
  it('answers only with the bearer token on the main server', async () => {
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${server.url}/metrics`, { headers: { Authorization: 'Bearer not-the-token-at-all' } })).status).toBe(401);
    expect((await fetch(`${server.url}/metrics`, { headers: { Authorization: `Basic ${METRICS_TOKEN}` } })).status).toBe(401);
    const response = await fetch(`${server.url}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await response.text();
    expect(text).toMatch(/^http_request_duration_seconds_count\{route="\/api\/health",method="GET",status="200"\} \d+/m);
    expect(text).toMatch(/^http_request_duration_seconds_count\{route="static",method="GET",status="200"\} \d+/m);
    expect(text).toMatch(/^meridian_store_operation_duration_seconds_count\{repository="users",operation="getByUsername"\} [1-9]/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
    expect(text).toMatch(/^meridian_regeneration_queue_depth \d+/m);
    // The raw URL is never a label: the upload token and query strings above are not in it.
    expect(text).not.toContain('abcdefghijklmnopqrstuvwx');
  });

  it('serves on METRICS_PORT without a token, /metrics only', async () => {
    const url = /Metrics on (http:\/\/[^\s"]+)/.exec(server.output())![1]!;
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('http_request_duration_seconds');
    expect((await fetch(url.replace('/metrics', '/api/health'))).status).toBe(404);
  });
});

describe('health and readiness', () => {
  it('/api/health keeps its shape and adds the version; /api/ready says ready with version, uptime, store and queue', async () => {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string };
    const health = await read<Record<string, unknown>>(await fetch(`${server.url}/api/health`));
    expect(health.body).toMatchObject({ ok: true, version: pkg.version, reconciling: expect.any(Number), publishing: expect.any(Object) });
    expect(typeof health.body.jobs).toBe('number');
    const ready = await read<Record<string, unknown>>(await fetch(`${server.url}/api/ready`));
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({
      ready: true,
      version: pkg.version,
      uptimeS: expect.any(Number),
      store: testingPostgres() ? 'postgres' : 'lowdb',
      queue: expect.any(Number),
    });
  });

  it('answers 503 with the reason while a stop drains the requests in flight', async () => {
    const draining = await startApiServer();
    try {
      const { port } = new URL(draining.url);
      // A request in flight (its body not sent yet), and one more behind it on the same connection.
      const socket = net.connect(Number(port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
      const body = JSON.stringify({ username: 'nobody', password: 'nobody-password' });
      // Expect: 100-continue: the server's 100 says it has read the head and handed the request on.
      socket.write(
        `POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n${body.slice(0, 5)}`,
      );
      await waitFor(
        () => `100 Continue, got: ${answer}`,
        async () => answer.startsWith('HTTP/1.1 100 Continue\r\n\r\n'),
        5000,
      );
      draining.process.kill('SIGTERM');
      await waitFor('the stop to begin', async () => draining.output().includes('SIGTERM: shutting down'), 5000);
      socket.write(`${body.slice(5)}GET /api/ready HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      // Both answers are chunked: the second ends with its last chunk.
      await waitFor(
        () => `both answers, got: ${answer}`,
        async () => /HTTP\/1\.1 503[\s\S]*\r\n0\r\n\r\n$/.test(answer) || undefined,
        5000,
      );
      expect(answer).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 401/);
      expect(answer).toMatch(/HTTP\/1\.1 503 Service Unavailable\r\n[\s\S]*Retry-After: 5/i);
      const json = JSON.parse(/\{"ready".*\}/.exec(answer)![0]) as Record<string, unknown>;
      expect(json).toMatchObject({ ready: false, reason: 'draining: the server is stopping' });
      socket.destroy();
    } finally {
      await draining.stop();
    }
  });
});

it('keeps every secret the tests used out of the log', () => {
  const leaks = findLeaks(server.rawOutput(), [...secrets]);
  expect(leaks).toEqual([]);
  // The scan itself finds what it looks for.
  expect(findLeaks(`{"msg":"x ${ADMIN.password} ${[...secrets].at(-1)}"}`, [...secrets]).length).toBeGreaterThan(0);
  expect(findLeaks('{"msg":"mail to jane@example.com"}', [])).toHaveLength(1);
  expect(findLeaks('{"msg":"mail to j***@example.com"}', [])).toHaveLength(0);
});
