/**
 * Abuse limits (issue 8): comments, votes and sign-ups are limited per client address with 429 and
 * Retry-After, and a refused request stores nothing; spoofed X-Forwarded-For does not escape the
 * limit unless a proxy is trusted; the comment honeypot; body size limits for streamed bodies; and
 * server timeouts against clients that trickle their headers or body over a raw socket.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  TestClient,
  adminClient,
  createArticle,
  expectError,
  expectServerUp,
  freshIp,
  openSocket,
  readDataFile,
  readUntilClosed,
  startHardenedServer,
  startServer,
  type TestServer,
} from './support.ts';

let server: TestServer;
let articleId: string;
/** The slow clients of the last test, started with the server: what the server did with each connection. */
let slowClients: Promise<SlowClients>;

beforeAll(async () => {
  server = await startHardenedServer();
  // The server's own timeouts take 10 to 30 s to cut these clients off, whatever else it serves meanwhile:
  // they trickle while the other tests run, and the last test reads what became of them.
  slowClients = startSlowClients(server);
  // Awaited (and so reported) by that test; not an unhandled rejection should the file stop before it.
  slowClients.catch(() => {});
  const admin = await adminClient(server);
  articleId = (await createArticle(admin, { title: 'Abuse target', status: 'published', section: 'world' })).id;
});

afterAll(async () => {
  await server?.stop();
});

function comment(n: number) {
  return { authorName: `Reader ${n}`, authorEmail: `reader${n}@example.com`, content: `Comment number ${n}` };
}

async function storedComments(): Promise<number> {
  return (await readDataFile<{ comments: unknown[] }>(server.dataDir, 'comments')).comments.length;
}

/** Sends until the first 429 (at most `max` requests); answers it and how many got through before. */
async function untilLimited(send: () => Promise<Response>, max: number): Promise<{ limited: Response; passed: number }> {
  for (let passed = 0; passed < max; passed++) {
    const response = await send();
    if (response.status === 429) return { limited: response, passed };
    expect(response.status, await response.text()).toBeLessThan(300);
  }
  throw new Error(`no 429 after ${max} requests`);
}

function expectRetryAfter(response: Response, windowSeconds: number): void {
  const seconds = Number(response.headers.get('retry-after'));
  expect(Number.isInteger(seconds)).toBe(true);
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(windowSeconds);
}

describe('rate limits per client address', () => {
  it('comments: 429 with Retry-After after the window fills, nothing stored past it, other addresses unaffected', async () => {
    const ip = freshIp();
    let sent = 0;
    const { limited, passed } = await untilLimited(
      () => new TestClient(server.url, ip).post(`/api/articles/${articleId}/comments`, comment(sent++)),
      20,
    );
    expect(passed).toBeGreaterThan(0);
    expectRetryAfter(limited, 60);
    await expectError(limited, 429);
    const stored = await storedComments();
    for (let i = 0; i < 10; i++)
      expect((await new TestClient(server.url, ip).post(`/api/articles/${articleId}/comments`, comment(100 + i))).status).toBe(429);
    expect(await storedComments()).toBe(stored);
    expect((await new TestClient(server.url, freshIp()).post(`/api/articles/${articleId}/comments`, comment(999))).status).toBe(201);
  });

  it('comments: junk counts against the window too, so probing the validator is throttled as well', async () => {
    const ip = freshIp();
    const { passed } = await untilLimited(async () => {
      const response = await new TestClient(server.url, ip).post(`/api/articles/${articleId}/comments`, { nonsense: true });
      // Junk is a 400 until the window is full; the helper only lets 2xx through, so map it.
      return response.status === 400 ? new Response(null, { status: 200 }) : response;
    }, 20);
    expect(passed).toBeLessThan(20);
    expect((await new TestClient(server.url, ip).post(`/api/articles/${articleId}/comments`, comment(1))).status).toBe(429);
  });

  it('votes: fresh visitor cookies do not reset the per-address limit', async () => {
    const ip = freshIp();
    // A new client (no cookie jar) for every vote: a bot clearing cookies between votes.
    const { limited, passed } = await untilLimited(() => new TestClient(server.url, ip).post(`/api/articles/${articleId}/like`), 200);
    expect(passed).toBeGreaterThan(0);
    expectRetryAfter(limited, 60);
    const counters = (await readDataFile<{ tallies: Record<string, { likes: number }> }>(server.dataDir, 'votes')).tallies[articleId]!;
    expect(counters.likes).toBe(passed);
    expect((await new TestClient(server.url, freshIp()).post(`/api/articles/${articleId}/dislike`)).status).toBe(200);
  });

  it('newsletter: 429 with Retry-After, no sign-up stored past the limit', async () => {
    const ip = freshIp();
    const { limited, passed } = await untilLimited(
      () => new TestClient(server.url, ip).post('/api/newsletter/subscribe', { email: `n${Math.random()}@example.com` }),
      50,
    );
    expectRetryAfter(limited, 60);
    const subscribers = (await readDataFile<{ subscribers: unknown[] }>(server.dataDir, 'subscribers')).subscribers.length;
    expect(subscribers).toBe(passed);
    expect((await new TestClient(server.url, ip).post('/api/newsletter/subscribe', { email: 'late@example.com' })).status).toBe(429);
    expect(JSON.stringify(await readDataFile(server.dataDir, 'subscribers'))).not.toContain('late@example.com');
  });

  it('without TRUST_PROXY a forged X-Forwarded-For does not buy a new window', async () => {
    const direct = await startServer();
    try {
      const admin = await adminClient(direct);
      const id = (await createArticle(admin, { title: 'Direct', status: 'published' })).id;
      // Every request claims another address; the socket's address is what counts.
      const { limited } = await untilLimited(
        () => new TestClient(direct.url, freshIp()).post('/api/newsletter/subscribe', { email: `d${Math.random()}@example.com` }),
        50,
      );
      expectRetryAfter(limited, 60);
      const more = await untilLimited(() => new TestClient(direct.url, freshIp()).post(`/api/articles/${id}/comments`, comment(1)), 50);
      expect(more.passed).toBeLessThan(50);
    } finally {
      await direct.stop();
    }
  });
});

describe('client address behind one trusted proxy (TRUST_PROXY=true, one hop)', () => {
  // What nginx's $proxy_add_x_forwarded_for sends: whatever the client wrote, then the address nginx saw.
  const throughProxy = (realIp: string) => new TestClient(server.url, `${freshIp()}, ${realIp}`);

  it('a forged leftmost X-Forwarded-For entry does not buy a new window: the entry the proxy appended counts', async () => {
    const real = freshIp();
    const { limited } = await untilLimited(
      () => throughProxy(real).post('/api/newsletter/subscribe', { email: `p${Math.random()}@example.com` }),
      50,
    );
    expectRetryAfter(limited, 60);
    const votes = await untilLimited(() => throughProxy(real).post(`/api/articles/${articleId}/like`), 200);
    expect(votes.passed).toBeLessThan(200);
    const comments = await untilLimited(() => throughProxy(real).post(`/api/articles/${articleId}/comments`, comment(7)), 20);
    expect(comments.passed).toBeLessThan(20);
    // Another client behind the same proxy has a window of its own.
    expect((await throughProxy(freshIp()).post('/api/newsletter/subscribe', { email: 'other-client@example.com' })).status).toBeLessThan(
      300,
    );
  });

  it('TRUST_PROXY=2 takes the address the second proxy appended', async () => {
    const two = await startServer({ env: { TRUST_PROXY: '2' } });
    try {
      const real = freshIp();
      // Client -> CDN (appends real) -> nginx (appends the CDN's address) -> server.
      const viaTwo = () => new TestClient(two.url, `${freshIp()}, ${real}, ${freshIp()}`);
      const { limited } = await untilLimited(
        () => viaTwo().post('/api/newsletter/subscribe', { email: `t${Math.random()}@example.com` }),
        50,
      );
      expectRetryAfter(limited, 60);
    } finally {
      await two.stop();
    }
  });
});

describe('the comment honeypot', () => {
  it('answers like a success but stores nothing when the hidden field is filled', async () => {
    const before = await storedComments();
    const spam = { authorName: 'Bot', authorEmail: 'bot@example.com', content: 'Cheap pills, honeypot spam' };
    for (const website of ['http://spam.example', 'x', ' buy now ']) {
      const response = await new TestClient(server.url, freshIp()).post(`/api/articles/${articleId}/comments`, { ...spam, website });
      expect(response.status).toBeLessThan(300);
    }
    expect(await storedComments()).toBe(before);
    const list = (await (await fetch(new URL(`/api/articles/${articleId}/comments`, server.url))).json()) as { content: string }[];
    expect(JSON.stringify(list)).not.toContain('honeypot spam');
    // People leave it empty, and their comments go through.
    expect(
      (await new TestClient(server.url, freshIp()).post(`/api/articles/${articleId}/comments`, { ...comment(8), website: '' })).status,
    ).toBe(201);
    expect(await storedComments()).toBe(before + 1);
  });
});

/** Sends raw HTTP/1.1 and answers the status line of the reply. */
async function rawExchange(lines: string, chunks: (string | Buffer)[]): Promise<string> {
  const socket = await openSocket(server.url);
  const reply = readUntilClosed(socket, 20_000);
  socket.write(lines);
  for (const chunk of chunks) {
    if (socket.destroyed) break;
    await new Promise<void>((resolve) => socket.write(chunk, () => resolve()));
  }
  const { data } = await reply;
  return data.split('\r\n')[0] ?? '';
}

describe('body size limits for bodies without a declared length', () => {
  it('refuses a chunked JSON body over 1 MB with 413 and stays up', async () => {
    const host = new URL(server.url).host;
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const chunks: Buffer[] = [Buffer.from('7\r\n{"a":"x\r\n')];
    for (let i = 0; i < 20; i++) chunks.push(Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]));
    chunks.push(Buffer.from('0\r\n\r\n'));
    const status = await rawExchange(
      `POST /api/newsletter/subscribe HTTP/1.1\r\nHost: ${host}\r\nOrigin: ${server.url}\r\nX-Forwarded-For: ${freshIp()}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`,
      chunks,
    );
    expect(status).toBe('HTTP/1.1 413 Payload Too Large');
    await expectServerUp(server);
  });

  it('refuses a page-view beacon over 4 KB with 413', async () => {
    const response = await new TestClient(server.url, freshIp()).request('POST', '/api/analytics/pageview', {
      body: JSON.stringify({ path: `/${'p'.repeat(5000)}` }),
      headers: { 'Content-Type': 'text/plain' },
    });
    await expectError(response, 413);
  });

  it('refuses a declared Content-Length over the limit before reading the body', async () => {
    const host = new URL(server.url).host;
    const status = await rawExchange(
      `POST /api/auth/login HTTP/1.1\r\nHost: ${host}\r\nOrigin: ${server.url}\r\nContent-Type: application/json\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\n{"username":"`,
      [],
    );
    expect(status).toBe('HTTP/1.1 413 Payload Too Large');
  });
});

type SlowClients = Record<'headers' | 'body' | 'idle', { data: string; closedAfterMs: number | undefined }>;

/**
 * Three clients below HTTP: one that trickles its headers, one that trickles its body (one byte every
 * 250 ms until the server closes the connection, or the patience given runs out), and an idle
 * keep-alive connection after one answered request.
 */
async function startSlowClients(target: TestServer): Promise<SlowClients> {
  const host = new URL(target.url).host;
  async function trickle(prefix: string, text: string, patienceMs: number) {
    const socket = await openSocket(target.url);
    const reply = readUntilClosed(socket, patienceMs);
    socket.write(prefix);
    let i = 0;
    const timer = setInterval(() => {
      if (!socket.destroyed) socket.write(text[i++ % text.length]!);
    }, 250);
    const result = await reply;
    clearInterval(timer);
    return result;
  }
  const [headers, body, idle] = await Promise.all([
    // headersTimeout is 10 s: a client still sending headers after 20 s has been let in too long.
    trickle(`GET /api/health HTTP/1.1\r\nHost: ${host}\r\n`, 'X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaa\r\n', 20_000),
    // requestTimeout is 30 s for the whole request: 45 s of trickled body is too long.
    trickle(
      `POST /api/newsletter/subscribe HTTP/1.1\r\nHost: ${host}\r\nOrigin: ${target.url}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
      ' ',
      45_000,
    ),
    (async () => {
      const socket = await openSocket(target.url);
      const reply = readUntilClosed(socket, 20_000);
      socket.write(`GET /api/health HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
      return reply;
    })(),
  ]);
  return { headers, body, idle };
}

describe('slow clients', () => {
  it('cuts off a client that trickles its headers, one that trickles its body, and an idle keep-alive connection', async () => {
    const { headers, body, idle } = await slowClients;
    expect(headers.closedAfterMs, 'trickled headers were never cut off').toBeDefined();
    expect(headers.data).toMatch(/^HTTP\/1\.1 408/);
    expect(body.closedAfterMs, 'a trickled body was never cut off').toBeDefined();
    expect(body.data).toMatch(/^HTTP\/1\.1 408/);
    expect(idle.data).toMatch(/^HTTP\/1\.1 200/);
    expect(idle.closedAfterMs, 'an idle keep-alive connection was kept open').toBeDefined();
    await expectServerUp(server);
  });
});
