/** /api/auth: sign-in, current user, sign-out, the session cookie and the login throttle. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import { ADMIN, TestClient, expectDataFilesValid, expectError, read, startApiServer } from './support.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startApiServer();
});

afterAll(async () => {
  await server?.stop();
});

describe('GET /api/auth/me', () => {
  it('answers 401 without a session', async () => {
    await expectError(await new TestClient(server.url).get('/api/auth/me'), 401);
  });

  it('answers 401 with a forged or malformed session cookie', async () => {
    const client = new TestClient(server.url);
    client.cookies.set('session', 'abcdefghijklmnopqrstuvwxyz234567');
    await expectError(await client.get('/api/auth/me'), 401);
    client.cookies.set('session', 'not-a-token');
    await expectError(await client.get('/api/auth/me'), 401);
  });

  it('answers the user after sign-in', async () => {
    const client = new TestClient(server.url);
    const login = await client.post('/api/auth/login', { username: ADMIN.username, password: ADMIN.password });
    expect(login.status).toBe(200);
    const cookie = login.headers.getSetCookie().find((c) => c.startsWith('session='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Path=\//);
    const { status, body } = await read(await client.get('/api/auth/me'));
    expect(status).toBe(200);
    expect(body).toEqual({
      user: {
        id: expect.any(String),
        username: ADMIN.username,
        role: 'admin',
        permissions: expect.objectContaining({ 'user.manage': 'all' }),
      },
    });
    expect(JSON.stringify(body)).not.toMatch(/passwordHash/);
  });
});

describe('the signed-in hint cookie', () => {
  const hintOf = (response: Response) => response.headers.getSetCookie().find((c) => c.startsWith('signed_in='));

  it('is set with the session at sign-in: readable by scripts, no secret, same lifetime', async () => {
    const client = new TestClient(server.url);
    const login = await client.post('/api/auth/login', { username: ADMIN.username, password: ADMIN.password });
    expect(login.status).toBe(200);
    const hint = hintOf(login);
    expect(hint).toMatch(/^signed_in=1;/);
    expect(hint).not.toMatch(/HttpOnly/i);
    expect(hint).toMatch(/SameSite=Lax/i);
    expect(hint).toMatch(/Path=\//);
    const session = login.headers.getSetCookie().find((c) => c.startsWith('session='))!;
    expect(hint!.match(/Expires=([^;]+)/i)?.[1]).toBe(session.match(/Expires=([^;]+)/i)?.[1]);
    expect(client.cookies.get('signed_in')).toBe('1');
  });

  it('is cleared at logout, and /api/auth/me still answers 401 without a session', async () => {
    const client = new TestClient(server.url);
    await client.login(ADMIN.username, ADMIN.password);
    const logout = await client.post('/api/auth/logout');
    expect(logout.status).toBe(204);
    expect(hintOf(logout)).toMatch(/^signed_in=;.*Max-Age=0/i);
    expect(client.cookies.has('signed_in')).toBe(false);
    await expectError(await client.get('/api/auth/me'), 401);
  });

  it('is cleared when the session is found invalid, or missing', async () => {
    const forged = new TestClient(server.url);
    forged.cookies.set('session', 'abcdefghijklmnopqrstuvwxyz234567');
    forged.cookies.set('signed_in', '1');
    await expectError(await forged.get('/api/auth/me'), 401);
    expect(forged.cookies.has('signed_in')).toBe(false);

    const hintOnly = new TestClient(server.url);
    hintOnly.cookies.set('signed_in', '1');
    await expectError(await hintOnly.get('/api/auth/me'), 401);
    expect(hintOnly.cookies.has('signed_in')).toBe(false);
  });

  it('is given back to a valid session that lacks it (sessions from before the hint)', async () => {
    const client = new TestClient(server.url);
    await client.login(ADMIN.username, ADMIN.password);
    client.cookies.delete('signed_in');
    expect((await client.get('/api/auth/me')).status).toBe(200);
    expect(client.cookies.get('signed_in')).toBe('1');
  });
});

describe('POST /api/auth/login', () => {
  it('refuses wrong credentials with 401 and the same message for unknown users', async () => {
    const client = new TestClient(server.url);
    const wrong = await expectError(await client.post('/api/auth/login', { username: ADMIN.username, password: 'wrong-password' }), 401);
    const unknown = await expectError(await client.post('/api/auth/login', { username: 'nobody', password: 'wrong-password' }), 401);
    expect(wrong.error).toBe('Invalid username or password.');
    expect(unknown.error).toBe(wrong.error);
    expect(client.cookies.has('session')).toBe(false);
  });

  it('answers 400 with issues for missing fields and unknown keys', async () => {
    const client = new TestClient(server.url);
    const missing = await expectError(await client.post('/api/auth/login', { username: '', password: '' }), 400);
    expect(missing.issues?.length).toBeGreaterThan(0);
    await expectError(await client.post('/api/auth/login', { username: 'a', password: 'b', admin: true }), 400);
    await expectError(await client.post('/api/auth/login', ['admin']), 400);
  });

  it('answers 400 for malformed JSON, 415 for another content type, 413 for a huge body', async () => {
    const client = new TestClient(server.url);
    await expectError(
      await client.request('POST', '/api/auth/login', { body: '{"username":', headers: { 'Content-Type': 'application/json' } }),
      400,
      /Malformed JSON/,
    );
    await expectError(
      await client.request('POST', '/api/auth/login', {
        body: 'username=admin',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      }),
      415,
    );
    await expectError(await client.request('POST', '/api/auth/login', { body: '{}' }), 415);
    const huge = JSON.stringify({ username: 'admin', password: 'x'.repeat(1024 * 1024 + 10) });
    await expectError(
      await client.request('POST', '/api/auth/login', { body: huge, headers: { 'Content-Type': 'application/json' } }),
      413,
    );
  });

  it('answers 403 to a foreign Origin', async () => {
    const client = new TestClient(server.url);
    await expectError(
      await client.request('POST', '/api/auth/login', {
        json: { username: ADMIN.username, password: ADMIN.password },
        headers: { Origin: 'https://evil.example' },
      }),
      403,
    );
    await expectError(
      await client.request('POST', '/api/auth/login', {
        json: { username: ADMIN.username, password: ADMIN.password },
        headers: { Origin: '', 'Sec-Fetch-Site': 'cross-site' },
      }),
      403,
    );
  });

  it('issues a new token at every sign-in and drops the old session', async () => {
    const client = new TestClient(server.url);
    await client.login();
    const first = client.cookies.get('session')!;
    await client.login();
    const second = client.cookies.get('session')!;
    expect(second).not.toBe(first);
    const stale = new TestClient(server.url);
    stale.cookies.set('session', first);
    await expectError(await stale.get('/api/auth/me'), 401);
  });

  it('throttles repeated failures with 429 and Retry-After', async () => {
    const client = new TestClient(server.url);
    let throttled: Response | undefined;
    // 3 free failures, then growing lock-outs: one of the next attempts must meet the lock.
    for (let attempt = 0; attempt < 12 && !throttled; attempt++) {
      const response = await client.post('/api/auth/login', { username: 'throttled-user', password: 'wrong-password' });
      if (response.status === 429) throttled = response;
      else expect(response.status).toBe(401);
    }
    expect(throttled).toBeDefined();
    expect(Number(throttled!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    await expectError(throttled!, 429);
  });
});

describe('POST /api/auth/logout', () => {
  it('ends the session on the server and clears the cookie', async () => {
    const client = new TestClient(server.url);
    await client.login();
    const token = client.cookies.get('session')!;
    const response = await client.post('/api/auth/logout');
    expect(response.status).toBe(204);
    expect(client.cookies.has('session')).toBe(false);
    await expectError(await client.get('/api/auth/me'), 401);
    // The old token is dead on the server too, not just forgotten by the browser.
    const replay = new TestClient(server.url);
    replay.cookies.set('session', token);
    await expectError(await replay.get('/api/auth/me'), 401);
  });

  it('answers 204 without a session and 403 from a foreign origin', async () => {
    const client = new TestClient(server.url);
    expect((await client.post('/api/auth/logout')).status).toBe(204);
    await expectError(await client.request('POST', '/api/auth/logout', { headers: { Origin: 'https://evil.example' } }), 403);
  });
});

it('keeps the data files valid JSON after the bad input', () => {
  expectDataFilesValid(server.dataDir);
});
