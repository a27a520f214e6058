/**
 * The newsletter: idempotent sign-up over the API, rate limit, the confirm and unsubscribe pages, the
 * dashboard's subscriber endpoints, and sign-up while the mail server stalls.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import { startSmtp } from '../helpers/smtp.ts';
import type { Subscriber, SubscriberListing } from '../../src/schemas/newsletter.ts';
import {
  TestClient,
  adminClient,
  createArticle,
  expectDataFilesValid,
  expectError,
  read,
  readDataFile,
  startApiServer,
} from './support.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startApiServer();
});

afterAll(async () => {
  await server?.stop();
});

async function subscribers(): Promise<Subscriber[]> {
  return (await readDataFile<{ subscribers: Subscriber[] }>(server.dataDir, 'subscribers')).subscribers;
}

describe('POST /api/newsletter/subscribe', () => {
  it('subscribes, and answers the same when already subscribed', async () => {
    const first = await read(await new TestClient(server.url).post('/api/newsletter/subscribe', { email: '  Reader@Example.com ' }));
    expect(first).toEqual({ status: 200, body: { message: 'Subscribed' } });
    const again = await read(await new TestClient(server.url).post('/api/newsletter/subscribe', { email: 'reader@example.com' }));
    expect(again).toEqual(first);
    const stored = (await subscribers()).filter((s) => s.email === 'reader@example.com');
    expect(stored).toHaveLength(1);
    expect(stored[0]!.token).toMatch(/^[a-z2-7]{32}$/);
  });

  it('refuses invalid addresses and bodies (400, 415, 413)', async () => {
    for (const body of [
      { email: 'not-an-email' },
      { email: '' },
      {},
      { email: 'a@b.c', name: 'x' },
      { email: `${'x'.repeat(250)}@example.com` },
    ]) {
      const error = await expectError(await new TestClient(server.url).post('/api/newsletter/subscribe', body), 400);
      expect(error.issues?.length).toBeGreaterThan(0);
    }
    await expectError(
      await new TestClient(server.url).request('POST', '/api/newsletter/subscribe', {
        body: '{"email"',
        headers: { 'Content-Type': 'application/json' },
      }),
      400,
    );
    await expectError(
      await new TestClient(server.url).request('POST', '/api/newsletter/subscribe', {
        body: 'email=a@b.c',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      }),
      415,
    );
    await expectError(
      await new TestClient(server.url).request('POST', '/api/newsletter/subscribe', {
        body: JSON.stringify({ email: 'x'.repeat(2 * 1024 * 1024) }),
        headers: { 'Content-Type': 'application/json' },
      }),
      413,
    );
    await expectError(
      await new TestClient(server.url).request('POST', '/api/newsletter/subscribe', {
        json: { email: 'a@b.co' },
        headers: { Origin: 'https://evil.example' },
      }),
      403,
    );
  });

  it('rate limits per IP with 429 and Retry-After', async () => {
    const ip = '10.97.0.1';
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await new TestClient(server.url, ip).post('/api/newsletter/subscribe', { email: `limit${i}@example.com` })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const limited = await new TestClient(server.url, ip).post('/api/newsletter/subscribe', { email: 'late@example.com' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    await expectError(limited, 429);
  });
});

describe('GET /newsletter/unsubscribe', () => {
  it('unsubscribes with the token and says so; a second subscribe re-activates', async () => {
    await new TestClient(server.url).post('/api/newsletter/subscribe', { email: 'leaving@example.com' });
    const token = (await subscribers()).find((s) => s.email === 'leaving@example.com')!.token;
    const response = await fetch(`${server.url}/newsletter/unsubscribe?token=${token}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/text\/html/);
    const html = await response.text();
    expect(html).toContain('You have been unsubscribed');
    expect(html).toContain('leaving@example.com');
    expect(html).toContain('noindex');
    expect((await subscribers()).find((s) => s.email === 'leaving@example.com')!.unsubscribedAt).toEqual(expect.any(String));
    // Following the link twice is harmless.
    expect((await fetch(`${server.url}/newsletter/unsubscribe?token=${token}`)).status).toBe(200);
    await new TestClient(server.url).post('/api/newsletter/subscribe', { email: 'leaving@example.com' });
    expect((await subscribers()).find((s) => s.email === 'leaving@example.com')!.unsubscribedAt).toBeUndefined();
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

describe('double opt-in over HTTP', () => {
  it('keeps a sign-up pending until its link is followed; the confirm page says why a link fails', async () => {
    await new TestClient(server.url).post('/api/newsletter/subscribe', { email: 'pending@example.com' });
    const stored = (await subscribers()).find((s) => s.email === 'pending@example.com')!;
    expect(stored.confirmTokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored.confirmedAt).toBeUndefined();
    const mails = fs.readdirSync(path.join(server.dataDir, 'outbox')).filter((f) => f.includes('pending@example.com'));
    expect(mails).toHaveLength(1);
    const unknown = await fetch(`${server.url}/newsletter/confirm?token=${'b'.repeat(32)}`);
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('This link cannot confirm a subscription');
    expect((await fetch(`${server.url}/newsletter/confirm?token=%3Cscript%3E`)).status).toBe(400);
    expect((await fetch(`${server.url}/newsletter/confirm`)).status).toBe(400);
  });
});

describe('subscribers in the dashboard', () => {
  it('is for signed-in staff only', async () => {
    const anonymous = new TestClient(server.url);
    await expectError(await anonymous.get('/api/newsletter/subscribers'), 401);
    await expectError(await anonymous.get('/api/newsletter/subscribers/export'), 401);
    await expectError(await anonymous.delete('/api/newsletter/subscribers/x'), 401);
    await expectError(await anonymous.get('/api/newsletter/briefing/preview'), 401);
    await expectError(await anonymous.post('/api/newsletter/briefing/test', { email: 'me@example.com' }), 401);
  });

  it('counts, searches, pages, exports safely and removes', async () => {
    const admin = await adminClient(server);
    for (const email of ['+cmd@example.com', '-2+3@example.com', 'findme.reader@example.com']) {
      expect((await new TestClient(server.url).post('/api/newsletter/subscribe', { email })).status).toBe(200);
    }
    const all = await read<SubscriberListing>(await admin.get('/api/newsletter/subscribers'));
    expect(all.status).toBe(200);
    expect(all.body.counts.pending).toBeGreaterThanOrEqual(3);
    expect(all.body.items[0]).not.toHaveProperty('token');
    expect(all.body.items[0]).not.toHaveProperty('confirmTokenHash');
    const found = await read<SubscriberListing>(await admin.get('/api/newsletter/subscribers?q=FINDME&status=pending'));
    expect(found.body.items.map((s: { email: string }) => s.email)).toEqual(['findme.reader@example.com']);
    expect(found.body.total).toBe(1);
    const paged = await read<SubscriberListing>(await admin.get('/api/newsletter/subscribers?pageSize=1&page=2'));
    expect(paged.body.items).toHaveLength(1);
    await expectError(await admin.get('/api/newsletter/subscribers?status=bogus'), 400);

    const csv = await admin.get('/api/newsletter/subscribers/export');
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).toMatch(/^attachment; filename="subscribers-\d{4}-\d{2}-\d{2}\.csv"$/);
    const rows = (await csv.text()).split('\r\n');
    expect(rows[0]).toBe('"email","status","signed_up","confirmed","unsubscribed"');
    expect(rows).toContain(rows.find((r) => r.startsWith(`"'+cmd@example.com"`)));
    expect(rows.some((r) => r.startsWith(`"'-2+3@example.com","pending"`))).toBe(true);
    expect(rows.some((r) => /^"[=+\-@]/.test(r))).toBe(false);

    const id = found.body.items[0].id as string;
    expect((await admin.delete(`/api/newsletter/subscribers/${id}`)).status).toBe(204);
    await expectError(await admin.delete(`/api/newsletter/subscribers/${id}`), 404);
    expect((await subscribers()).some((s) => s.email === 'findme.reader@example.com')).toBe(false);
  });

  it('previews the briefing and sends a test copy', async () => {
    const admin = await adminClient(server);
    await createArticle(admin, { title: 'Preview headline', status: 'published', isEditorsPick: true });
    const preview = await read<{ subject: string; text: string; articles: number }>(await admin.get('/api/newsletter/briefing/preview'));
    expect(preview.status).toBe(200);
    expect(preview.body.subject).toContain('Preview headline');
    expect(preview.body.text).toContain('Preview headline');
    expect(preview.body.articles).toBe(1);
    const html = await admin.get('/api/newsletter/briefing/preview?format=html');
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    expect(html.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await html.text()).toContain('Preview headline');

    const sent = await read(await admin.post('/api/newsletter/briefing/test', { email: 'editor@example.com' }));
    expect(sent).toEqual({ status: 200, body: { message: 'Test copy sent to editor@example.com' } });
    const copies = fs.readdirSync(path.join(server.dataDir, 'outbox')).filter((f) => f.includes('editor@example.com'));
    expect(copies).toHaveLength(1);
    expect(fs.readFileSync(path.join(server.dataDir, 'outbox', copies[0]!), 'utf8')).toMatch(/^Subject: \[Test\] Meridian News briefing/m);
    await expectError(await admin.post('/api/newsletter/briefing/test', { email: 'nope' }), 400);
  });
});

describe('sign-up while the mail server stalls', () => {
  it('answers 503 with Retry-After within SMTP_TIMEOUT_MS, leaves no half-made record, and a retry later works', async () => {
    const smtp = await startSmtp();
    // Short for the test, long enough for a healthy exchange on a busy 2-core machine.
    const timeoutMs = 3000;
    const mailing = await startApiServer({ SMTP_URL: smtp.url, SMTP_TIMEOUT_MS: String(timeoutMs) });
    const stored = async (email: string) =>
      (await readDataFile<{ subscribers: Subscriber[] }>(mailing.dataDir, 'subscribers')).subscribers.find((s) => s.email === email);
    const confirmLink = (text: string) =>
      /https?:\/\/\S+\/newsletter\/confirm\?token=[a-z0-9]+/.exec(text)![0].replace(/^https?:\/\/[^/]+/, mailing.url);
    const signUp = (email: string) => new TestClient(mailing.url).post('/api/newsletter/subscribe', { email });
    try {
      // Pending before the outage: its link must outlive a resend that fails.
      expect((await signUp('kept@example.com')).status).toBe(200);
      const [first] = await smtp.waitFor('kept@example.com');
      const keptBefore = await stored('kept@example.com');

      smtp.fault('stall');
      for (const email of ['stalled@example.com', 'kept@example.com']) {
        const started = performance.now();
        const response = await signUp(email);
        const ms = performance.now() - started;
        expect(response.status, email).toBe(503);
        expect(response.headers.get('retry-after')).toBe('120');
        expect(await response.json()).toEqual({ error: 'We could not send the confirmation e-mail. Please try again in a few minutes.' });
        // Within the timeout (nodemailer alone would wait 2 minutes to connect, 10 for a silent socket); slack for a busy machine.
        expect(ms, email).toBeLessThan(timeoutMs + 5000);
      }
      expect(await stored('stalled@example.com')).toBeUndefined();
      expect(await stored('kept@example.com')).toEqual(keptBefore);
      expect(smtp.messages).toHaveLength(1);

      smtp.fault(undefined);
      expect((await signUp('stalled@example.com')).status).toBe(200);
      const [late] = await smtp.waitFor('stalled@example.com');
      expect((await fetch(confirmLink(late!.parsed.text!))).status).toBe(200);
      expect((await stored('stalled@example.com'))?.confirmedAt).toBeDefined();
      expect((await fetch(confirmLink(first!.parsed.text!))).status).toBe(200);
      expect((await stored('kept@example.com'))?.confirmedAt).toBeDefined();
      // Two failed sign-ups, one line each for the cause (once a minute), not one per request.
      const lines = mailing.output().split('\n');
      expect(lines.filter((l) => l.startsWith('[api] 503: We could not send the confirmation e-mail'))).toHaveLength(1);
      expect(lines.filter((l) => l.startsWith('[newsletter] confirmation mail to '))).toHaveLength(1);
    } finally {
      await mailing.stop();
      await smtp.stop();
    }
  }, 90_000);
});
