/**
 * Authentication and sessions under attack (issue 8): every admin endpoint refuses callers without
 * a live session, the login throttle holds against 200 guesses (serial, concurrent, spread over
 * addresses or usernames), sessions are renewed at login and killed at logout, cookies are locked
 * down, and cross-origin state-changing requests are refused whatever they carry.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN,
  TestClient,
  adminClient,
  createArticle,
  expectError,
  expectServerUp,
  freshIp,
  makeDataDir,
  readDataFile,
  ageSessions,
  send,
  snapshotDataDir,
  startHardenedServer,
  waitForIdleQueue,
  type TestServer,
} from './support.ts';

let server: TestServer;
let admin: TestClient;
let ids: { article: string; comment: string; source: string; user: string };

beforeAll(async () => {
  server = await startHardenedServer();
  admin = await adminClient(server);
  const article = await createArticle(admin, { title: 'Guarded', status: 'published', section: 'world' });
  const comment = await admin.post(`/api/articles/${article.id}/comments`, {
    authorName: 'R',
    authorEmail: 'r@example.com',
    content: 'Hi',
  });
  const source = await admin.post('/api/news-sources', {
    name: 'Guarded feed',
    url: 'http://127.0.0.1:9/feed.xml',
    section: 'world',
    enabled: false,
  });
  const me = (await (await admin.get('/api/auth/me')).json()) as { user: { id: string } };
  ids = {
    article: article.id,
    comment: ((await comment.json()) as { id: string }).id,
    source: ((await source.json()) as { id: string }).id,
    user: me.user.id,
  };
  await waitForIdleQueue(server.url);
});

afterAll(async () => {
  await server?.stop();
});

/** Every admin endpoint with a body that would succeed for an admin, so only the session decides. */
function adminCalls(): { method: string; path: string; json?: unknown }[] {
  return [
    { method: 'POST', path: '/api/articles', json: { title: 'Intruder' } },
    { method: 'PUT', path: `/api/articles/${ids.article}`, json: { title: 'Defaced' } },
    { method: 'DELETE', path: `/api/articles/${ids.article}` },
    { method: 'GET', path: '/api/articles/stats' },
    { method: 'POST', path: `/api/admin/articles/${ids.article}/adjust-likes`, json: { amount: 1000 } },
    { method: 'POST', path: `/api/admin/articles/${ids.article}/adjust-dislikes`, json: { amount: 1000 } },
    { method: 'GET', path: '/api/admin/comments' },
    { method: 'GET', path: '/api/admin/comments/count' },
    { method: 'PUT', path: `/api/comments/${ids.comment}/status`, json: { status: 'hidden' } },
    { method: 'DELETE', path: `/api/comments/${ids.comment}` },
    { method: 'GET', path: '/api/news-sources' },
    { method: 'POST', path: '/api/news-sources', json: { name: 'Evil', url: 'http://127.0.0.1:9/evil.xml', section: 'world' } },
    { method: 'PUT', path: `/api/news-sources/${ids.source}`, json: { enabled: true } },
    { method: 'DELETE', path: `/api/news-sources/${ids.source}` },
    { method: 'POST', path: `/api/news-sources/${ids.source}/fetch` },
    { method: 'POST', path: '/api/images/upload-url' },
    { method: 'POST', path: '/api/images/normalize', json: { imageUrl: 'http://127.0.0.1:9/x.jpg' } },
    { method: 'GET', path: '/api/users' },
    { method: 'POST', path: '/api/users', json: { username: 'intruder', role: 'admin', password: 'intruder-password' } },
    { method: 'PUT', path: `/api/users/${ids.user}`, json: { resetPassword: true } },
    { method: 'DELETE', path: `/api/users/${ids.user}` },
    { method: 'GET', path: '/api/audit' },
  ];
}

/** A token of the right shape that no session was ever created with. */
const FORGED = 'abcdefghijklmnopqrstuvwxyz234567';

describe('admin endpoints without a live session', () => {
  it('answer 401 with no cookie, a forged token, a malformed one, or the stored session id itself', async () => {
    const before = await snapshotDataDir(server.dataDir);
    const sessions = await readDataFile<{ sessions: Record<string, unknown> }>(server.dataDir, 'sessions');
    const storedId = Object.keys(sessions.sessions)[0]!;
    // What a leaked sessions.json holds is a hash: it must not work as a token.
    const cookies = [
      undefined,
      FORGED,
      'x'.repeat(4000),
      `${admin.cookies.get('session')}x`,
      storedId,
      `${admin.cookies.get('session')!.toUpperCase()}`,
    ];
    for (const call of adminCalls()) {
      for (const cookie of cookies) {
        const client = new TestClient(server.url);
        if (cookie !== undefined) client.cookies.set('session', cookie);
        const response = await client.request(call.method, call.path, call.json === undefined ? {} : { json: call.json });
        await expectError(response, 401);
      }
    }
    expect(await snapshotDataDir(server.dataDir)).toEqual(before);
  });

  it('redirect /admin and the editor to /login', async () => {
    for (const page of ['/admin', '/admin/editor', `/admin/editor/${ids.article}`]) {
      const client = new TestClient(server.url);
      client.cookies.set('session', FORGED);
      const response = await client.get(page);
      expect([302, 303, 307]).toContain(response.status);
      expect(response.headers.get('location')).toMatch(/^\/login/);
    }
  });

  it('answer 401 once the session has expired, and the expired session is removed', async () => {
    const dataDir = makeDataDir('meridian-expiry-');
    let other = await startHardenedServer({}, dataDir);
    const client = await adminClient(other);
    const token = client.cookies.get('session')!;
    expect((await client.get('/api/articles/stats')).status).toBe(200);
    await other.stop();
    // Age every session past its expiry while the server is down: the store is the only clock it has.
    await ageSessions(dataDir, new Date(Date.now() - 1000).toISOString());
    other = await startHardenedServer({}, dataDir);
    try {
      const replay = new TestClient(other.url);
      replay.cookies.set('session', token);
      for (const call of adminCalls())
        await expectError(await replay.request(call.method, call.path, call.json === undefined ? {} : { json: call.json }), 401);
      await other.stop();
      const after = await readDataFile<{ sessions: Record<string, unknown> }>(dataDir, 'sessions');
      expect(Object.keys(after.sessions)).toHaveLength(0);
    } finally {
      await other.stop();
    }
  });
});

describe('the login throttle', () => {
  /** Sends attempts `concurrency` at a time; answers how many were really checked (401) and how many throttled (429). */
  async function guess(attempts: { username: string; password: string; ip: string }[], concurrency: number) {
    const counts = { checked: 0, throttled: 0, other: [] as number[] };
    for (let i = 0; i < attempts.length; i += concurrency) {
      const batch = attempts.slice(i, i + concurrency);
      const responses = await Promise.all(
        batch.map((a) =>
          send(server.url, {
            method: 'POST',
            path: '/api/auth/login',
            headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': a.ip },
            body: JSON.stringify({ username: a.username, password: a.password }),
          }),
        ),
      );
      for (const r of responses) {
        if (r.status === 401) counts.checked++;
        else if (r.status === 429) {
          counts.throttled++;
          expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        } else counts.other.push(r.status);
      }
    }
    return counts;
  }

  /** Guesses from `ip` until one is refused with at least `seconds` left on the lock (each checked guess doubles it). */
  async function untilLockedForSeconds(ip: string, seconds: number) {
    for (let tries = 0; tries < 20; tries++) {
      const response = await send(server.url, {
        method: 'POST',
        path: '/api/auth/login',
        headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': ip },
        body: JSON.stringify({ username: 'lock-probe', password: `probe-${tries}` }),
      });
      if (response.status === 429 && Number(response.headers.get('retry-after')) >= seconds) return;
      if (response.status === 429) await new Promise((resolve) => setTimeout(resolve, 1000 * Number(response.headers.get('retry-after'))));
    }
    throw new Error(`${ip} never stayed locked for ${seconds} s`);
  }

  /** 3 free failures, then lock-outs of 1 s, 2 s, 4 s...: a few seconds of guessing buys a handful of real checks. */
  const MAX_CHECKED = 8;

  it('holds against 200 guesses from one address over many usernames, sent 20 at a time', async () => {
    const ip = freshIp();
    const attempts = Array.from({ length: 200 }, (_, i) => ({ username: `user${i}`, password: `guess-${i}`, ip }));
    const counts = await guess(attempts, 20);
    expect(counts.other).toEqual([]);
    expect(counts.checked).toBeLessThanOrEqual(MAX_CHECKED);
    // Locked out: even the right password from this address is refused. The lock may run out between
    // the last guess and the check, so the check is sent just after a refusal with seconds still to wait.
    await untilLockedForSeconds(ip, 3);
    const right = await send(server.url, {
      method: 'POST',
      path: '/api/auth/login',
      headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': ip },
      body: JSON.stringify(ADMIN),
    });
    expect(right.status).toBe(429);
  });

  it('holds against 200 guesses at one account from 200 addresses, spelled in every case', async () => {
    const spellings = ['victim', 'VICTIM', 'Victim', ' victim ', 'vIcTiM'];
    const attempts = Array.from({ length: 200 }, (_, i) => ({
      username: spellings[i % spellings.length]!,
      password: `guess-${i}`,
      ip: freshIp(),
    }));
    const counts = await guess(attempts, 20);
    expect(counts.other).toEqual([]);
    expect(counts.checked).toBeLessThanOrEqual(MAX_CHECKED);
  });

  it('holds against 200 guesses sent one after another', async () => {
    const ip = freshIp();
    const attempts = Array.from({ length: 200 }, (_, i) => ({ username: 'serial-target', password: `guess-${i}`, ip }));
    const counts = await guess(attempts, 1);
    expect(counts.other).toEqual([]);
    expect(counts.checked).toBeLessThanOrEqual(MAX_CHECKED);
  });
});

describe('session lifecycle', () => {
  it('replaces a planted (fixated) token at login, and the planted one stays worthless', async () => {
    const victim = new TestClient(server.url);
    victim.cookies.set('session', FORGED);
    await victim.login();
    const issued = victim.cookies.get('session')!;
    expect(issued).not.toBe(FORGED);
    expect(issued).toMatch(/^[a-z2-7]{32}$/);
    const attacker = new TestClient(server.url);
    attacker.cookies.set('session', FORGED);
    await expectError(await attacker.get('/api/articles/stats'), 401);
  });

  it('kills the session on the server at logout: a copied cookie is dead for every admin endpoint', async () => {
    const client = await adminClient(server);
    const token = client.cookies.get('session')!;
    const copy = new TestClient(server.url);
    copy.cookies.set('session', token);
    expect((await copy.get('/api/articles/stats')).status).toBe(200);
    expect((await client.post('/api/auth/logout')).status).toBe(204);
    for (const call of adminCalls())
      await expectError(await copy.request(call.method, call.path, call.json === undefined ? {} : { json: call.json }), 401);
  });

  it('sets the session cookie HttpOnly, SameSite and Path=/, without Secure over plain http', async () => {
    const response = await new TestClient(server.url).post('/api/auth/login', ADMIN);
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith('session='))!;
    expect(cookie).toMatch(/;\s*HttpOnly/i);
    expect(cookie).toMatch(/;\s*SameSite=(Lax|Strict)/i);
    expect(cookie).toMatch(/;\s*Path=\//i);
    expect(cookie).not.toMatch(/;\s*Secure/i);
  });

  it('adds Secure to the session and visitor cookies when SITE_URL is https', async () => {
    const secure = await startHardenedServer({ SITE_URL: 'https://news.example' });
    try {
      const client = new TestClient(secure.url);
      const login = await client.post('/api/auth/login', ADMIN);
      expect(login.status).toBe(200);
      const session = login.headers.getSetCookie().find((c) => c.startsWith('session='))!;
      expect(session).toMatch(/;\s*Secure/i);
      expect(session).toMatch(/;\s*HttpOnly/i);
      // The signed-in hint is readable by scripts on purpose (it holds no secret), but never sent over plain http.
      expect(login.headers.getSetCookie().find((c) => c.startsWith('signed_in='))).toMatch(/;\s*Secure/i);
      const article = await createArticle(client, { title: 'Secure cookies', status: 'published' });
      const vote = await new TestClient(secure.url).post(`/api/articles/${article.id}/like`);
      expect(vote.status).toBe(200);
      const visitor = vote.headers.getSetCookie().find((c) => c.startsWith('vid='))!;
      expect(visitor).toMatch(/;\s*Secure/i);
      expect(visitor).toMatch(/;\s*HttpOnly/i);
      expect((await client.post('/api/auth/logout')).headers.getSetCookie().join()).toMatch(/session=;.*Secure/i);
    } finally {
      await secure.stop();
    }
  });
});

describe('cross-origin state-changing requests', () => {
  it('are refused (403) for every state-changing endpoint and foreign origin, even with an admin cookie', async () => {
    const before = await snapshotDataDir(server.dataDir);
    const port = new URL(server.url).port;
    const foreign: Record<string, string>[] = [
      { Origin: 'https://evil.example' },
      { Origin: 'null' },
      { Origin: `http://127.0.0.1:${Number(port) + 1}` },
      { Origin: `https://127.0.0.1:${port}` },
      { Origin: `http://127.0.0.1:${port}.evil.example` },
      { Origin: `http://localhost:${port}` },
      { Origin: '', 'Sec-Fetch-Site': 'cross-site' },
      { Origin: '', 'Sec-Fetch-Site': 'same-site' },
    ];
    const publicCalls = [
      { method: 'POST', path: '/api/auth/login', json: ADMIN },
      { method: 'POST', path: '/api/auth/logout' },
      { method: 'POST', path: `/api/articles/${ids.article}/like` },
      { method: 'POST', path: `/api/articles/${ids.article}/dislike` },
      {
        method: 'POST',
        path: `/api/articles/${ids.article}/comments`,
        json: { authorName: 'CSRF', authorEmail: 'c@example.com', content: 'forged' },
      },
      { method: 'POST', path: '/api/newsletter/subscribe', json: { email: 'csrf@example.com' } },
      { method: 'POST', path: '/api/analytics/pageview', json: { path: '/section/world' } },
      { method: 'PUT', path: '/api/images/upload/aaaaaaaaaaaaaaaaaaaaaaaa?expires=1&sig=x' },
    ];
    const calls = [...adminCalls().filter((c) => c.method !== 'GET'), ...publicCalls];
    for (const call of calls) {
      for (const headers of foreign) {
        // A form post is the classic CSRF: text/plain needs no preflight, so the origin check is all there is.
        for (const contentType of ['application/json', 'text/plain']) {
          const client = new TestClient(server.url);
          client.cookies = new Map(admin.cookies);
          const response = await client.request(call.method, call.path, {
            body: JSON.stringify(call.json ?? {}),
            headers: { ...headers, 'Content-Type': contentType },
          });
          expect(response.status, `${call.method} ${call.path} ${JSON.stringify(headers)}`).toBe(403);
          await response.body?.cancel();
        }
      }
    }
    expect(await snapshotDataDir(server.dataDir)).toEqual(before);
    // The admin session itself is untouched by the refused logout.
    expect((await admin.get('/api/articles/stats')).status).toBe(200);
    await expectServerUp(server);
  });
});
