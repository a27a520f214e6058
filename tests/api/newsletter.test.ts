/** The newsletter: idempotent sign-up over the API, rate limit, and the unsubscribe page. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import type { Subscriber } from '../../src/schemas/newsletter.ts';
import { TestClient, expectDataFilesValid, expectError, read, readDataFile, startApiServer } from './support.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startApiServer();
});

afterAll(async () => {
  await server?.stop();
});

function subscribers(): Subscriber[] {
  return readDataFile<{ subscribers: Subscriber[] }>(server.dataDir, 'subscribers').subscribers;
}

describe('POST /api/newsletter/subscribe', () => {
  it('subscribes, and answers the same when already subscribed', async () => {
    const first = await read(await new TestClient(server.url).post('/api/newsletter/subscribe', { email: '  Reader@Example.com ' }));
    expect(first).toEqual({ status: 200, body: { message: 'Subscribed' } });
    const again = await read(await new TestClient(server.url).post('/api/newsletter/subscribe', { email: 'reader@example.com' }));
    expect(again).toEqual(first);
    const stored = subscribers().filter((s) => s.email === 'reader@example.com');
    expect(stored).toHaveLength(1);
    expect(stored[0]!.token).toMatch(/^[a-z2-7]{32}$/);
  });

  it('refuses invalid addresses and bodies (400, 415, 413)', async () => {
    for (const body of [{ email: 'not-an-email' }, { email: '' }, {}, { email: 'a@b.c', name: 'x' }, { email: `${'x'.repeat(250)}@example.com` }]) {
      const error = await expectError(await new TestClient(server.url).post('/api/newsletter/subscribe', body), 400);
      expect(error.issues?.length).toBeGreaterThan(0);
    }
    await expectError(await new TestClient(server.url).request('POST', '/api/newsletter/subscribe', { body: '{"email"', headers: { 'Content-Type': 'application/json' } }), 400);
    await expectError(await new TestClient(server.url).request('POST', '/api/newsletter/subscribe', { body: 'email=a@b.c', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }), 415);
    await expectError(
      await new TestClient(server.url).request('POST', '/api/newsletter/subscribe', { body: JSON.stringify({ email: 'x'.repeat(2 * 1024 * 1024) }), headers: { 'Content-Type': 'application/json' } }),
      413,
    );
    await expectError(await new TestClient(server.url).request('POST', '/api/newsletter/subscribe', { json: { email: 'a@b.co' }, headers: { Origin: 'https://evil.example' } }), 403);
  });

  it('rate limits per IP with 429 and Retry-After', async () => {
    const ip = '10.97.0.1';
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await new TestClient(server.url, ip).post('/api/newsletter/subscribe', { email: `limit${i}@example.com` })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const limited = await new TestClient(server.url, ip).post('/api/newsletter/subscribe', { email: 'late@example.com' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    await expectError(limited, 429);
  });
});

describe('GET /newsletter/unsubscribe', () => {
  it('unsubscribes with the token and says so; a second subscribe re-activates', async () => {
    await new TestClient(server.url).post('/api/newsletter/subscribe', { email: 'leaving@example.com' });
    const token = subscribers().find((s) => s.email === 'leaving@example.com')!.token;
    const response = await fetch(`${server.url}/newsletter/unsubscribe?token=${token}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/text\/html/);
    const html = await response.text();
    expect(html).toContain('You have been unsubscribed');
    expect(html).toContain('leaving@example.com');
    expect(html).toContain('noindex');
    expect(subscribers().find((s) => s.email === 'leaving@example.com')!.unsubscribedAt).toEqual(expect.any(String));
    // Following the link twice is harmless.
    expect((await fetch(`${server.url}/newsletter/unsubscribe?token=${token}`)).status).toBe(200);
    await new TestClient(server.url).post('/api/newsletter/subscribe', { email: 'leaving@example.com' });
    expect(subscribers().find((s) => s.email === 'leaving@example.com')!.unsubscribedAt).toBeUndefined();
  });

  it('answers 404 with a message for an unknown token, 400 for a malformed or missing one', async () => {
    const unknown = await fetch(`${server.url}/newsletter/unsubscribe?token=${'a'.repeat(32)}`);
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('Subscription not found');
    expect((await fetch(`${server.url}/newsletter/unsubscribe?token=%3Cscript%3E`)).status).toBe(400);
    expect((await fetch(`${server.url}/newsletter/unsubscribe`)).status).toBe(400);
  });
});

it('keeps the data files valid JSON after the bad input', () => {
  expectDataFilesValid(server.dataDir);
});
