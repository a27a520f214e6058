/**
 * Two real servers on one real PostgreSQL database, each serving its own copy of the pages: a
 * publish through one is live on the other, the CDN is purged once, a server killed during a burst
 * of writes loses nothing acknowledged and the other takes over its claimed jobs, and a scheduled
 * article is published exactly once. Then the same behind Debian's nginx (deploy/nginx-multi.conf).
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type net from 'node:net';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient, makeDataDir, startServer, type TestServer } from '../helpers/server.ts';
import { databaseFor } from '../helpers/postgres.ts';
import { startBalancer, type RunningNginx } from '../helpers/nginx.ts';
import { createPool } from '../../src/store/pg/db.ts';
import { adminClient, createArticle, read, TestClient, waitFor, waitForIdleQueue } from './support.ts';
import { readFixture, startFeedServer } from '../fixtures/feeds/feed-server.ts';
import type { FetchProgress, NewsSource } from '../../src/schemas/source.ts';
import type { PurgeBody } from '../../src/server/publishing/purge.ts';
import { briefingKey } from '../../src/server/briefing/service.ts';
import { openStore } from '../../src/store/index.ts';

const status = async (server: TestServer, publicPath: string) => {
  const response = await fetch(new URL(publicPath, server.url), { redirect: 'manual' });
  await response.body?.cancel();
  return response.status;
};
const text = async (server: TestServer, publicPath: string) => (await fetch(new URL(publicPath, server.url))).text();
const ownerOf = (server: TestServer) => /\[publish\] worker ([0-9a-f-]{36})/.exec(server.output())?.[1];

describe('two servers on one PostgreSQL database', () => {
  let databaseUrl: string;
  let db: ReturnType<typeof createPool>;
  let a: TestServer;
  let b: TestServer;
  let adminA: TestClient;
  let adminB: TestClient;
  const purged: string[] = [];
  let purgeServer: http.Server;

  /** A's worker takes jobs at once; B's waits 1.5 s for a page to settle, so A is the one holding claims when it is killed. */
  const start = (name: 'a' | 'b', dataDir = makeDataDir(`meridian-multi-${name}-`)) =>
    startServer({
      dataDir,
      env: {
        DATABASE_URL: databaseUrl,
        // JOB_LEASE_MS left at its default (4 s): the takeover after a crash is timed below.
        REGENERATION_SETTLE_MS: name === 'a' ? '0' : '1500',
        PURGE_URL: `http://127.0.0.1:${(purgeServer.address() as net.AddressInfo).port}/purge`,
        SITE_URL: 'https://news.example',
      },
    });

  beforeAll(async () => {
    purgeServer = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        purged.push(...(JSON.parse(body) as PurgeBody).paths);
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => purgeServer.listen(0, '127.0.0.1', resolve));
    databaseUrl = await databaseFor(makeDataDir('meridian-multi-db-'));
    db = createPool(databaseUrl, false);
    a = await start('a');
    b = await start('b');
    // Each server draws its own served folder as it starts; the tests time what happens after that.
    await Promise.all([waitForIdleQueue(a.url, 90_000), waitForIdleQueue(b.url, 90_000)]);
    adminA = await adminClient(a);
    adminB = await adminClient(b);
  }, 180_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await db?.end();
    purgeServer?.close();
  });

  it('a publish through A is live on B, rendered once, and the CDN is purged once', async () => {
    const started = performance.now();
    const article = await createArticle(adminA, { title: 'Harbour bridge reopens', section: 'world', status: 'published' });
    const acknowledged = performance.now();
    const articlePath = `/article/${article.slug}`;
    await waitFor('the article on B', async () => (await status(b, articlePath)) === 200);
    const liveOnB = performance.now();
    console.log(
      `publish -> live on the other server: ${(liveOnB - acknowledged).toFixed(0)} ms after the API answered (${(liveOnB - started).toFixed(0)} ms after the request)`,
    );
    // A generous bound (the machine is shared); the figure above is what the issue asks about.
    expect(liveOnB - acknowledged).toBeLessThan(10_000);
    expect(await text(b, articlePath)).toContain('Harbour bridge reopens');
    // The section listing is a page of its own, rendered (by A) after the article.
    await waitFor('the section listing on B', async () => (await text(b, '/section/world')).includes('Harbour bridge reopens'));
    // B copied the page A rendered: B never rendered it itself.
    const renders = (server: TestServer) =>
      server
        .output()
        .split('\n')
        .filter((l) => l.startsWith(`[publish] ${articlePath} `)).length;
    await waitFor('the purge notification', async () => purged.includes(articlePath));
    // A second render (B's settle is 1.5 s) would be a job in the shared queue until it was done and logged.
    await waitForIdleQueue(a.url);
    await waitForIdleQueue(b.url);
    expect(renders(a) + renders(b)).toBe(1);
    expect(purged.filter((p) => p === articlePath)).toHaveLength(1);
  }, 60_000);

  it('publishes a scheduled article exactly once with both servers running', async () => {
    const article = await createArticle(adminB, {
      title: 'Midnight results',
      section: 'business',
      status: 'scheduled',
      scheduledFor: new Date(Date.now() + 1500).toISOString(),
    });
    const articlePath = `/article/${article.slug}`;
    await waitFor(
      'the scheduled article on both servers',
      async () => (await status(a, articlePath)) === 200 && (await status(b, articlePath)) === 200,
    );
    // A second publication would queue the article's pages again, and is logged before they render.
    await waitForIdleQueue(a.url);
    await waitForIdleQueue(b.url);
    const published = (server: TestServer) =>
      server
        .output()
        .split('\n')
        .filter((l) => l.includes(`scheduled article published: ${article.slug}`)).length;
    expect(published(a) + published(b)).toBe(1);
  });

  it('an upload URL from A works once on whichever server the PUT reaches, and both serve the processed image', async () => {
    const png = await sharp({ create: { width: 640, height: 360, channels: 3, background: { r: 200, g: 90, b: 30 } } })
      .png()
      .toBuffer();
    const { uploadURL } = (await (await adminA.post('/api/images/upload-url')).json()) as { uploadURL: string };
    const put = (server: TestServer) =>
      new ApiClient(server.url).request('PUT', uploadURL, { body: new Uint8Array(png), headers: { 'Content-Type': 'image/png' } });
    expect((await put(b)).status).toBe(204);
    // Used: refused on the other server too.
    expect((await put(a)).status).toBe(410);
    // Normalised through A (which never saw the bytes): the files reach B's own DATA_DIR/images.
    const normalized = await adminA.post('/api/images/normalize', { imageUrl: uploadURL });
    expect(normalized.status, await normalized.clone().text()).toBe(200);
    const { path: imagePath } = (await normalized.json()) as { path: string };
    for (const server of [a, b]) {
      await waitFor(`the image on ${server.url}`, async () => (await status(server, imagePath)) === 200);
      const response = await fetch(new URL(imagePath, server.url));
      expect(response.headers.get('content-type')).toBe('image/webp');
      expect((await sharp(Buffer.from(await response.arrayBuffer())).metadata()).format).toBe('webp');
    }
  });

  it("sends the day's briefing once to each subscriber when both servers are asked at once", async () => {
    await createArticle(adminA, { title: 'Morning markets', section: 'business', status: 'published' });
    const store = await openStore(makeDataDir('meridian-multi-subscribers-'), 'write', { databaseUrl });
    try {
      for (let i = 0; i < 12; i++) {
        const at = new Date().toISOString();
        await store.subscribers.upsert({
          id: `sub-${i}`,
          email: `reader${i}@example.com`,
          token: `token${i}token${i}token`,
          createdAt: at,
          confirmedAt: at,
        });
      }
    } finally {
      await store.close();
    }
    const { rows } = await db.query<{ value: string }>(`SELECT value FROM meta WHERE key = 'appSecret'`);
    const key = briefingKey(rows[0]!.value);
    const ask = (server: TestServer) =>
      fetch(new URL('/api/newsletter/briefing/run', server.url), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Origin: server.url, 'X-Briefing-Key': key },
        body: JSON.stringify({ force: false }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { outcome: string; runId: string } }));
    const answers = await Promise.all([ask(a), ask(b)]);
    for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    // One run for the day, whichever server started it.
    expect(new Set(answers.map((x) => x.body.runId)).size).toBe(1);
    // The second either finds the run started ('already-sent') or joins it ('sent'), claiming recipients one by one.
    for (const answer of answers) expect(['sent', 'already-sent']).toContain(answer.body.outcome);
    const outbox = (server: TestServer) => {
      const dir = path.join(server.dataDir, 'outbox');
      return fs.existsSync(dir) ? fs.readdirSync(dir).map((f) => fs.readFileSync(path.join(dir, f), 'utf8')) : [];
    };
    const mails = [...outbox(a), ...outbox(b)];
    const recipients = mails.map((m) => /^To: (\S+)/m.exec(m)?.[1]).sort();
    expect(recipients).toEqual(Array.from({ length: 12 }, (_, i) => `reader${i}@example.com`).sort());
  });

  it('counts every failed sign-in once when guesses reach both servers at once', async () => {
    const guess = (server: TestServer) =>
      new TestClient(server.url).post('/api/auth/login', { username: 'guesser', password: 'wrong-password-1' }).then((r) => r.status);
    const statuses = await Promise.all(Array.from({ length: 24 }, (_, i) => guess(i % 2 ? a : b)));
    const refused = statuses.filter((s) => s === 401).length;
    expect(refused + statuses.filter((s) => s === 429).length).toBe(24);
    const { rows } = await db.query<{ key: string; value: { failures: number } }>(`SELECT key, value FROM limits WHERE key LIKE 'login:%'`);
    // Every attempt that got as far as the password check was counted, on each key: none lost between the
    // servers. (An attempt may also count on one key and then be refused on the other, locked meanwhile.)
    for (const key of ['login:user:guesser', 'login:ip:']) {
      const failures = rows.find((r) => r.key.startsWith(key))?.value.failures ?? 0;
      expect(failures, key).toBeGreaterThanOrEqual(refused);
      expect(failures, key).toBeLessThanOrEqual(24);
    }
    // This address is locked out now; the later tests sign in from it.
    await db.query(`DELETE FROM limits WHERE key LIKE 'login:%'`);
  });

  it('a server that was down copies the pages published meanwhile before it serves', async () => {
    await b.stop();
    const article = await createArticle(adminA, { title: 'Night shift report', section: 'world', status: 'published' });
    const articlePath = `/article/${article.slug}`;
    await waitFor(
      'A to store the page',
      async () => (await db.query('SELECT 1 FROM rendered_pages WHERE path = $1', [articlePath])).rowCount === 1,
    );
    b = await start('b', b.dataDir);
    adminB = await adminClient(b);
    // The very first request after B listens: no render of B's own has run yet.
    expect(await status(b, articlePath)).toBe(200);
    expect(await text(b, articlePath)).toContain('Night shift report');
    expect(b.output()).toMatch(/stored pages copied before serving: [1-9]\d* written/);
  });

  it('A killed while it holds the render job of an article just published: B takes the job over when its lease runs out and serves the page', async () => {
    const ownerA = ownerOf(a);
    expect(ownerA).toBeDefined();
    // Both idle: A's first job after the publish is the article's page.
    await Promise.all([waitForIdleQueue(a.url, 60_000), waitForIdleQueue(b.url, 60_000)]);
    // A stalled write holds A mid-job: while this transaction locks the table, no rendered page can be
    // stored, so A has claimed the article's job and written its own file but not yet shared the bytes.
    const blocker = await db.connect();
    let articlePath = '';
    let acknowledged = 0;
    let killed = 0;
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE rendered_pages IN SHARE ROW EXCLUSIVE MODE');
      const article = await createArticle(adminA, { title: 'Crash-proof bulletin', section: 'world', status: 'published' });
      acknowledged = performance.now();
      articlePath = `/article/${article.slug}`;
      await waitFor(
        'A holding the article job',
        async () => (await db.query('SELECT 1 FROM jobs WHERE path = $1 AND claimed_by = $2', [articlePath, ownerA])).rowCount === 1,
        10_000,
      );
      await a.kill();
      killed = performance.now();
      // The statement A left waiting would still store A's bytes once the lock goes: end it, as A's death would have.
      await blocker.query(`SELECT pg_terminate_backend(pid) FROM pg_locks WHERE relation = 'rendered_pages'::regclass AND NOT granted`);
    } finally {
      await blocker.query('ROLLBACK').catch(() => {});
      blocker.release();
    }
    try {
      await waitFor('the article on B', async () => (await status(b, articlePath)) === 200, 30_000);
      const live = performance.now();
      // The figure, for the log: the takeover waits out A's lease (JOB_LEASE_MS, 4 s), then B renders.
      // Not asserted: on a loaded machine B's render alone can take seconds.
      console.log(
        `publish -> live on the survivor through a crash: ${(live - acknowledged).toFixed(0)} ms after the API answered; A was killed holding the job ${(killed - acknowledged).toFixed(0)} ms after it, B served the page ${(live - killed).toFixed(0)} ms after the kill`,
      );
      // B completes the job A held (the queue keeps it until a server does): rendered by B, written, or
      // unchanged when A's bytes reached the database after all (its statement may not yet have been
      // waiting for the lock when the test ended the waiting ones).
      await waitFor(
        'B to complete the job A held',
        async () => (await db.query('SELECT 1 FROM jobs WHERE path = $1', [articlePath])).rowCount === 0,
        30_000,
      );
      // B logs the job once it has completed it: its line may still be on its way through the pipe.
      await waitFor(
        'B to log the page A held as rendered',
        async () =>
          b
            .output()
            .split('\n')
            .some((l) => l.startsWith(`[publish] ${articlePath} written`) || l.startsWith(`[publish] ${articlePath} unchanged`)),
        10_000,
      );
    } finally {
      // A back for the tests that follow, whatever happened here (the same DATA_DIR, so the same worker
      // id), done with the reconcile a start after a crash runs.
      a = await start('a', a.dataDir);
      adminA = await adminClient(a);
      await waitForIdleQueue(a.url, 60_000);
    }
  }, 120_000);

  it('SIGKILL of A during a burst of writes: nothing acknowledged is lost, B takes over the jobs A had claimed', async () => {
    const ownerA = ownerOf(a);
    expect(ownerA).toBeDefined();
    const acknowledged: { id: string; slug: string }[] = [];
    let writing = true;
    let failed = 0;
    const writer = async (n: number) => {
      for (let i = 0; writing; i++) {
        try {
          const response = await adminA.post('/api/articles', {
            title: `Burst ${n}-${i}`,
            section: 'tech',
            status: 'published',
            bodyHtml: '<p>Body text.</p>',
          });
          if (response.status === 201) acknowledged.push((await response.json()) as { id: string; slug: string });
          else await response.body?.cancel();
        } catch {
          // The connection died with A: not acknowledged, so not promised.
          failed++;
          break;
        }
      }
    };
    const writers = [writer(1), writer(2), writer(3)];
    // Kill A while it holds a claimed job (a page it is rendering), with writes still in flight: it is
    // frozen (SIGSTOP) when seen holding one, and killed if it still does, else let go on and watched again.
    const claimedByA = async () =>
      (await db.query<{ path: string }>('SELECT path FROM jobs WHERE claimed_by = $1', [ownerA])).rows.map((r) => r.path);
    const held = await waitFor('A to be frozen holding a claimed job', async () => {
      if (acknowledged.length < 5 || (await claimedByA()).length === 0) return undefined;
      a.process.kill('SIGSTOP');
      const frozen = await claimedByA();
      if (frozen.length > 0) return frozen;
      a.process.kill('SIGCONT');
      return undefined;
    });
    await a.kill();
    writing = false;
    await Promise.all(writers);
    const { rows: stillHeld } = await db.query<{ path: string }>('SELECT path FROM jobs WHERE claimed_by = $1', [ownerA]);
    expect(stillHeld.length).toBeGreaterThan(0);
    console.log(
      `killed A with ${held.length} claimed job(s) (${held.join(', ')}), ${stillHeld.length} still held by it after the kill; ${acknowledged.length} writes acknowledged, ${failed} writers cut off`,
    );

    // Everything acknowledged is in the store and, once B has taken over the queue, served by B.
    for (const article of acknowledged) {
      const response = await adminB.get(`/api/articles/${article.id}`);
      expect(response.status, article.slug).toBe(200);
      await response.body?.cancel();
    }
    await waitFor(
      'the queue to drain on B',
      async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs')).rows[0]!.n === 0,
      60_000,
    );
    for (const article of acknowledged) expect(await status(b, `/article/${article.slug}`), article.slug).toBe(200);
    // Each logged once completed: a line may still be on its way through the pipe.
    for (const jobPath of stillHeld.map((r) => r.path))
      await waitFor(
        `B to log ${jobPath} as rendered`,
        async () =>
          b
            .output()
            .split('\n')
            .some((l) => l.startsWith(`[publish] ${jobPath} `)),
        10_000,
      );
    // A burst, a kill and the takeover's lease: the queue alone may take up to a minute on a loaded machine.
  }, 120_000);

  // Last: the feed's articles and its source must not weigh on the timed tests above.
  it('Fetch Now through A shows its progress through B, while the feed downloads and after', async () => {
    // A back from the SIGKILL above (the same DATA_DIR).
    a = await start('a', a.dataDir);
    adminA = await adminClient(a);
    const feeds = await startFeedServer();
    try {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      feeds.route('/held.xml', async (_req, res) => {
        await held;
        res.writeHead(200, { 'Content-Type': 'application/rss+xml' });
        res.end(readFixture('rss2sample.xml'));
      });
      const created = await read<NewsSource>(
        await adminA.post('/api/news-sources', { name: 'Shared progress', url: `${feeds.url}/held.xml`, section: 'tech' }),
      );
      expect(created.status).toBe(201);
      const runOn = async (client: TestClient) =>
        (await read<{ runs: FetchProgress[] }>(await client.get('/api/news-sources/progress'))).body.runs.find(
          (run) => run.sourceId === created.body.id,
        );
      const fetching = adminA.post(`/api/news-sources/${created.body.id}/fetch`);
      expect(await waitFor('B to see the run A started', () => runOn(adminB))).toMatchObject({ state: 'running', phase: 'downloading' });
      release();
      expect((await fetching).status).toBe(200);
      expect(await runOn(adminB)).toMatchObject({ state: 'done', read: 4, created: 4, message: 'Fetched 4 items, 4 new' });
    } finally {
      await feeds.close();
    }
  }, 120_000);
});

describe('two servers behind nginx (deploy/nginx-multi.conf)', () => {
  let databaseUrl: string;
  let a: TestServer;
  let b: TestServer;
  let nginx: RunningNginx;
  let admin: TestClient;

  beforeAll(async () => {
    databaseUrl = await databaseFor(makeDataDir('meridian-nginx-db-'));
    const env = { DATABASE_URL: databaseUrl, JOB_LEASE_MS: '3000', TRUST_PROXY: '1' };
    a = await startServer({ env });
    b = await startServer({ env });
    await Promise.all([waitForIdleQueue(a.url, 90_000), waitForIdleQueue(b.url, 90_000)]);
    nginx = await startBalancer([Number(new URL(a.url).port), Number(new URL(b.url).port)]);
    admin = new TestClient(nginx.url);
    await admin.login();
  }, 180_000);

  afterAll(async () => {
    await nginx?.stop();
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it('publishes through the balancer, live on both servers; with one SIGKILLed mid-burst nothing acknowledged is lost and reads keep working', async () => {
    const first = await createArticle(admin, { title: 'Balanced bulletin', section: 'world', status: 'published' });
    const started = performance.now();
    await waitFor(
      'the article on both servers',
      async () => (await status(a, `/article/${first.slug}`)) === 200 && (await status(b, `/article/${first.slug}`)) === 200,
    );
    console.log(`behind nginx: publish -> live on both servers ${(performance.now() - started).toFixed(0)} ms after the API answered`);

    const acknowledged: { id: string; slug: string }[] = [];
    let writing = true;
    const writer = async (n: number) => {
      for (let i = 0; writing; i++) {
        const response = await admin
          .post('/api/articles', { title: `Balanced burst ${n}-${i}`, section: 'tech', status: 'published', bodyHtml: '<p>Body text.</p>' })
          .catch(() => undefined);
        if (response?.status === 201) acknowledged.push((await response.json()) as { id: string; slug: string });
        else await response?.body?.cancel();
      }
    };
    const writers = [writer(1), writer(2), writer(3), writer(4)];
    await waitFor('a few acknowledged writes', async () => acknowledged.length >= 6);
    await a.kill();
    const afterKill = acknowledged.length;
    await waitFor('writes acknowledged after the kill', async () => acknowledged.length >= afterKill + 6);
    writing = false;
    await Promise.all(writers);
    // Reads through the balancer keep being answered (by B) after A died.
    for (let i = 0; i < 10; i++) expect(await status({ url: nginx.url } as TestServer, `/article/${first.slug}`)).toBe(200);
    for (const article of acknowledged) {
      const response = await admin.get(`/api/articles/${article.id}`);
      expect(response.status, article.slug).toBe(200);
      await response.body?.cancel();
    }
    await waitFor(
      'every acknowledged article served by B',
      async () => {
        for (const article of acknowledged) if ((await status(b, `/article/${article.slug}`)) !== 200) return false;
        return true;
      },
      60_000,
    );
    console.log(
      `behind nginx: ${acknowledged.length} writes acknowledged (${afterKill} before the SIGKILL), all stored and live on the surviving server`,
    );
  });
});
