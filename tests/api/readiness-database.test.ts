/**
 * Liveness and readiness while PostgreSQL is down: on a cluster of this file's own, stopped under a
 * running server. /api/health still answers, /api/ready says why not, and both recover with the database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, startCluster, testingPostgres, type Cluster } from '../helpers/postgres.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { read, TestClient, waitFor } from './support.ts';

/** Generous: these check that an answer comes at all (no hang on a dead database), not how fast it is. */
const ANSWERS_WITHIN_MS = 5000;

// Its own cluster whatever the pass: run once, in the lowdb pass (TEST_STORE=pg would only repeat it).
describe.skipIf(testingPostgres())('readiness with the database down', () => {
  let cluster: Cluster;
  let server: TestServer;

  beforeAll(async () => {
    cluster = await startCluster();
    const databaseUrl = await createDatabase(cluster.url, 'readiness');
    server = await startServer({ env: { DATABASE_URL: databaseUrl } });
  });

  afterAll(async () => {
    await server?.stop();
    cluster?.stop();
  });

  /** GET a path and answer its status, body and how long it took, failing when it does not answer in time. */
  async function timedGet(pathname: string, headers: Record<string, string> = {}) {
    const started = Date.now();
    const response = await fetch(`${server.url}${pathname}`, { headers, signal: AbortSignal.timeout(ANSWERS_WITHIN_MS) });
    const { status, body } = await read<Record<string, unknown>>(response);
    return { status, body, ms: Date.now() - started, retryAfter: response.headers.get('retry-after') };
  }

  it('is ready while the database answers', async () => {
    const ready = await timedGet('/api/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ ready: true, store: 'postgres', queue: expect.any(Number) });
  });

  it('stays alive but not ready while the database is down, logs the 5xx it causes, and is ready again once it is back', async () => {
    cluster.halt();
    const ready = await timedGet('/api/ready');
    expect(ready.status).toBe(503);
    expect(ready.retryAfter).toBe('5');
    expect(ready.body).toMatchObject({ ready: false, store: 'postgres', queue: null });
    expect(String(ready.body.reason)).toMatch(/^store: /);
    const health = await timedGet('/api/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ ok: true, jobs: null });

    // A request that needs the database answers 503 (docs/reliability.md), and the log names it by its id.
    const failed = await new TestClient(server.url).request('POST', '/api/auth/login', {
      json: { username: 'admin', password: 'correct-horse-battery' },
      headers: { 'X-Request-Id': 'db-down-1' },
    });
    expect(failed.status).toBe(503);
    expect(failed.headers.get('retry-after')).toBe('5');
    await waitFor(
      'the failure in the log',
      async () => /"reqId":"db-down-1".*"msg":"\[api\] 503: The database is unavailable/.test(server.rawOutput()),
      5000,
    );

    cluster.resume();
    // The bound is for a loaded machine; a failure says what the server answered last.
    let last: unknown;
    await waitFor(
      () => `readiness after the database is back (its last answer: ${JSON.stringify(last)})`,
      async () => {
        const answer = await timedGet('/api/ready');
        last = answer.body;
        return answer.status === 200;
      },
      60_000,
    );
    expect((await timedGet('/api/health')).body).toMatchObject({ ok: true, jobs: expect.any(Number) });
  }, 90_000);
});
