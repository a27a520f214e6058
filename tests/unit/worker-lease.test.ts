/**
 * Job leases on PostgreSQL: a job whose work outlasts its lease keeps it renewed while it runs, so
 * another server cannot take it over; once done, the claim is given up.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { openStore, type Store } from '../../src/store/index.ts';
import type { Runtime } from '../../src/server/runtime.ts';
import { startRegenerationWorker, type RegenerationWorker } from '../../src/server/publishing/worker.ts';
import { databaseFor } from '../helpers/postgres.ts';
import { closeQuietly, makeTempDir, quietObservability } from './support.ts';
import { createSilentLog } from '../../src/server/log.ts';

const opened: Store[] = [];
const workers: RegenerationWorker[] = [];
afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.stop();
  for (const store of opened.splice(0)) await closeQuietly(store);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('job leases', () => {
  it('renews the lease of a job that runs longer than it, and gives the claim up when done', async () => {
    const databaseUrl = await databaseFor(makeTempDir('meridian-lease-db-'));
    const dataDir = makeTempDir('meridian-lease-');
    const store = await openStore(dataDir, 'write', { databaseUrl });
    const other = await openStore(makeTempDir('meridian-lease-other-'), 'write', { databaseUrl });
    opened.push(store, other);
    const runtime: Runtime = {
      config: parseConfig({ DATA_DIR: dataDir, SEED: 'none', DATABASE_URL: databaseUrl, JOB_LEASE_MS: '300' }),
      store,
      hooks: { articlesChanged: [], writesInFlight: 0 },
      services: new Map(),
      ...quietObservability(),
    };
    const LONG_MS = 1500;
    let slowStarted = false;
    let slowDone = false;
    const worker = startRegenerationWorker(runtime, {
      clientDir: makeTempDir('meridian-lease-site-'),
      writesPending: () => false,
      settleMs: 0,
      log: createSilentLog().log,
      render: async (publicPath) => {
        if (publicPath !== '/article/slow') return { kind: 'missing' };
        slowStarted = true;
        await sleep(LONG_MS);
        slowDone = true;
        return { kind: 'page', body: new TextEncoder().encode('<p>slow</p>') };
      },
    });
    workers.push(worker);
    // Queued a moment ago: a job started in the millisecond it was queued would run twice (runJob).
    await store.jobs.enqueue(['/article/slow'], new Date(Date.now() - 5).toISOString());
    worker.wake();
    const [job] = await store.jobs.list(10);
    for (let i = 0; i < 500 && !slowStarted; i++) await sleep(10);
    expect(slowStarted).toBe(true);
    // Another server tries to take the job over all along: five leases pass while it runs.
    let takenOver = false;
    while (!slowDone) {
      if (await other.jobs.claim(job!.id, 'another-server', Date.now() + 300, Date.now())) takenOver = true;
      await sleep(50);
    }
    expect(takenOver).toBe(false);
    for (let i = 0; i < 300 && (await store.jobs.size()) > 0; i++) await sleep(10);
    expect(await store.jobs.size()).toBe(0);
  });
});
