/**
 * Feeds that misbehave, on a real store (lowdb, or PostgreSQL with TEST_STORE=pg) and real local HTTP
 * servers: one that trickles a byte a second, one whose body never ends, one that never answers. The
 * scheduler cuts each at the fetch timeout or the size limit, records why on the source, and fetches
 * the healthy sources on time meanwhile.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startFeedScheduler } from '../../src/server/ingest/feed-scheduler.ts';
import { isFetching, MAX_FEED_BYTES } from '../../src/server/ingest/feed-fetch.ts';
import { DEFAULT_TIMEOUT_MS } from '../../src/server/net/safe-fetch.ts';
import type { NewsSource } from '../../src/schemas/source.ts';
import { closeQuietly, makeRuntime } from './support.ts';

type TestRuntime = Awaited<ReturnType<typeof makeRuntime>>;

let runtime: TestRuntime | undefined;
let peer: http.Server | undefined;

afterEach(async () => {
  await closeQuietly(runtime?.store);
  peer?.closeAllConnections();
  await new Promise((resolve) => peer?.close(resolve) ?? resolve(undefined));
  runtime = undefined;
  peer = undefined;
});

function feedOf(name: string, base: string): string {
  const items = [1, 2]
    .map(
      (n) =>
        `<item><title>${name} story ${n}</title><link>${base}/${name}/${n}</link><guid>${name}-${n}</guid><description>Body ${n}.</description></item>`,
    )
    .join('');
  return `<?xml version="1.0"?><rss version="2.0"><channel><title>${name}</title><link>${base}/</link>${items}</channel></rss>`;
}

/** The peers: healthy feeds, and the three that misbehave. Answers what each request saw happen to its connection. */
async function startPeers(): Promise<{ url: string; closed: Set<string> }> {
  const closed = new Set<string>();
  const server = http.createServer((req, res) => {
    const name = req.url!.slice(1);
    res.on('close', () => closed.add(name));
    if (name.startsWith('healthy')) {
      res.writeHead(200, { 'Content-Type': 'application/rss+xml' });
      res.end(feedOf(name, url));
    } else if (name === 'trickle') {
      // A feed that starts well and then sends one byte a second.
      res.writeHead(200, { 'Content-Type': 'application/rss+xml' });
      res.write('<?xml version="1.0"?><rss version="2.0"><channel><title>Trickle</title>');
      const timer = setInterval(() => res.write(' '), 1000);
      res.on('close', () => clearInterval(timer));
    } else if (name === 'endless') {
      // A body that never ends, sent as fast as the client reads it.
      res.writeHead(200, { 'Content-Type': 'application/rss+xml' });
      res.write('<?xml version="1.0"?><rss version="2.0"><channel><title>Endless</title>');
      const chunk = `<item><title>again</title><description>${'x'.repeat(16_000)}</description></item>`;
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
      };
      res.on('drain', pump);
      pump();
    }
    // 'hang': the request is read and never answered.
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  peer = server;
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, closed };
}

describe('slow and hostile feeds', () => {
  it('cuts a trickling, an endless and a silent feed, and fetches the other sources on time meanwhile', async () => {
    const { url, closed } = await startPeers();
    runtime = await makeRuntime();
    runtime.config = { ...runtime.config, FETCH_ALLOW_PRIVATE_NETWORKS: true };
    const names = ['trickle', 'endless', 'hang', 'healthy-a', 'healthy-b', 'healthy-c', 'healthy-d'];
    const sources = new Map<string, NewsSource>();
    for (const [i, name] of names.entries()) {
      // Never fetched: every source is due at the first pass, the misbehaving ones first (created earliest).
      const source: NewsSource = {
        id: randomUUID(),
        name,
        type: 'rss',
        url: `${url}/${name}`,
        section: 'world',
        enabled: true,
        createdAt: new Date(Date.UTC(2020, 0, 1 + i)).toISOString(),
      };
      await runtime.store.sources.insert(source);
      sources.set(name, source);
    }
    const rt = runtime;
    const stored = async (name: string) => (await rt.store.sources.get(sources.get(name)!.id))!;
    const scheduler = startFeedScheduler(runtime);
    const started = performance.now();
    try {
      await scheduler.tick();
      // The healthy sources are fetched while the trickling and the silent ones still hold their slots.
      for (const name of ['healthy-a', 'healthy-b', 'healthy-c', 'healthy-d']) {
        await expect.poll(async () => (await stored(name)).lastFetchedAt, { timeout: 5000, interval: 100 }).toBeDefined();
        expect((await stored(name)).lastError, name).toBeUndefined();
      }
      expect(isFetching(rt, sources.get('trickle')!.id)).toBe(true);
      expect(isFetching(rt, sources.get('hang')!.id)).toBe(true);
      expect(await runtime.store.articles.count({})).toBe(8);

      // The endless body is cut at the size limit, long before the timeout.
      await expect
        .poll(async () => (await stored('endless')).lastError, { timeout: 5000, interval: 100 })
        .toBe(`The response is larger than ${MAX_FEED_BYTES / 1024 / 1024} MB`);
      // The other two at the fetch timeout (15 s), never later than a generous bound.
      const bound = DEFAULT_TIMEOUT_MS + 10_000;
      await expect
        .poll(async () => (await stored('trickle')).lastError, { timeout: bound, interval: 250 })
        .toMatch(new RegExp(`did not finish its answer within ${DEFAULT_TIMEOUT_MS / 1000} s$`));
      await expect
        .poll(async () => (await stored('hang')).lastError, { timeout: bound, interval: 250 })
        .toMatch(new RegExp(`did not answer within ${DEFAULT_TIMEOUT_MS / 1000} s$`));
      expect(performance.now() - started).toBeLessThan(bound);
      // Cut means the connection is closed, not left open to the peer.
      await expect
        .poll(() => [...closed].sort(), { timeout: 5000, interval: 100 })
        .toEqual(expect.arrayContaining(['endless', 'hang', 'trickle']));
      // Its run ends once its error and progress are stored, a moment after the error shows.
      await expect.poll(() => isFetching(rt, sources.get('trickle')!.id), { timeout: 5000, interval: 50 }).toBe(false);
    } finally {
      await scheduler.stop();
    }
  }, 60_000);
});
