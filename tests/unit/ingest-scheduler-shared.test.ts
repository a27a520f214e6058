/** The feed schedule across servers: two processes sharing one PostgreSQL store fetch a due source once, not once each. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.ts';
import { databaseFor } from '../helpers/postgres.ts';
import { ROOT } from '../helpers/server.ts';
import { readFixture, startFeedServer, type FeedServer } from '../fixtures/feeds/feed-server.ts';
import { makeTempDir } from './support.ts';

let feeds: FeedServer | undefined;
afterEach(async () => {
  await feeds?.close();
  feeds = undefined;
});

/** One server's scheduler in a process of its own: opens the store, runs one pass, exits. */
const PASS = `
import { parseConfig } from ${JSON.stringify(path.join(ROOT, 'src/config.ts'))};
import { openStore } from ${JSON.stringify(path.join(ROOT, 'src/store/index.ts'))};
import { startFeedScheduler } from ${JSON.stringify(path.join(ROOT, 'src/server/ingest/feed-scheduler.ts'))};
import { createLog } from ${JSON.stringify(path.join(ROOT, 'src/server/log.ts'))};
import { createMetrics } from ${JSON.stringify(path.join(ROOT, 'src/server/metrics.ts'))};
import { createCoordination } from ${JSON.stringify(path.join(ROOT, 'src/server/runtime.ts'))};
const config = parseConfig(process.env);
const store = await openStore(config.DATA_DIR, 'write', { databaseUrl: config.DATABASE_URL });
const runtime = { config, store, hooks: { articlesChanged: [], writesInFlight: 0 }, services: new Map(), ...createLog(config), metrics: createMetrics({ defaults: false }), ...createCoordination() };
const scheduler = startFeedScheduler(runtime);
await scheduler.tick();
await scheduler.stop();
await store.close();
`;

function schedulerPass(databaseUrl: string, onExit: () => void = () => {}): Promise<string> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', PASS], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATA_DIR: makeTempDir(),
      DATABASE_URL: databaseUrl,
      SEED: 'none',
      FETCH_ALLOW_PRIVATE_NETWORKS: 'true',
      FEED_FETCH_INTERVAL_MINUTES: '15',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  return new Promise((resolve, reject) =>
    child.once('exit', (code) => {
      onExit();
      if (code === 0) resolve(output);
      else reject(new Error(`scheduler pass exited ${code}: ${output}`));
    }),
  );
}

describe('the feed schedule on a shared store', () => {
  it('fetches a due source once across two servers, and ingests its items once', async () => {
    feeds = await startFeedServer();
    let passEnded!: () => void;
    const onePassEnded = new Promise<void>((resolve) => (passEnded = resolve));
    // A slow feed: answered once the other server's pass has ended, so it read the source as due while
    // this fetch was under way (the bound only lets a double fetch, which no pass ends before, fail).
    feeds.route('/feeds/slow.xml', async (_req, res) => {
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([onePassEnded, new Promise((resolve) => (bound = setTimeout(resolve, 10_000)))]);
      clearTimeout(bound);
      res.writeHead(200, { 'Content-Type': 'application/rss+xml' });
      res.end(readFixture('rss2sample.xml'));
    });
    const url = await databaseFor(makeTempDir('meridian-feeds-'));
    const store = await openStore(makeTempDir(), 'write', { databaseUrl: url });
    await store.sources.insert({
      id: 'slow',
      name: 'Slow wire',
      type: 'rss',
      url: `${feeds.url}/feeds/slow.xml`,
      section: 'world',
      enabled: true,
      createdAt: '2020-01-01T00:00:00.000Z',
    });
    const outputs = await Promise.all([schedulerPass(url, passEnded), schedulerPass(url, passEnded)]);
    expect(
      feeds.requests.filter((r) => r.path === '/feeds/slow.xml'),
      outputs.join('\n---\n'),
    ).toHaveLength(1);
    expect(outputs.join('\n').match(/\[ingest\] Slow wire: Fetched/g)).toHaveLength(1);
    const ingested = await store.articles.count({});
    expect(ingested).toBeGreaterThan(0);
    expect((await store.sources.get('slow'))?.lastFetchedAt).toBeDefined();
    await store.close();
  });
});
