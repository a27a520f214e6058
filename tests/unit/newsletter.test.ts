/** Double opt-in, its limits, the legacy-record rule, CSV export and the briefing's calendar, on a real store and the .eml outbox. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { simpleParser, type ParsedMail } from 'mailparser';
import { CONFIRM_LIMITS, confirmSubscription, csvCell, exportSubscribersCsv, subscribe, unsubscribe } from '../../src/server/newsletter.ts';
import { PAUSE_AFTER, runBriefing } from '../../src/server/briefing/briefing.ts';
import { startSmtp } from '../helpers/smtp.ts';
import { isBriefingDue, localTime } from '../../src/server/briefing/clock.ts';
import { subscriberStatus } from '../../src/schemas/newsletter.ts';
import { openStore } from '../../src/store/index.ts';
import { appErrorOf, articleRecord, closeQuietly, makeRuntime, makeTempDir } from './support.ts';

type TestRuntime = Awaited<ReturnType<typeof makeRuntime>>;
let runtime: TestRuntime | undefined;

afterEach(async () => {
  for (const service of runtime?.services.values() ?? []) await service.stop();
  await closeQuietly(runtime?.store);
  runtime = undefined;
});

type Mail = { to: string; text: string; html: string; headers: Map<string, string>; raw: string };

/** The .eml files of the outbox, oldest first, parsed as a mail client would. */
async function outbox(rt: TestRuntime): Promise<Mail[]> {
  const dir = path.join(rt.dataDir, 'outbox');
  if (!fs.existsSync(dir)) return [];
  const files = fs.readdirSync(dir).sort();
  return Promise.all(
    files.map(async (f) => {
      const raw = fs.readFileSync(path.join(dir, f), 'utf8');
      const parsed: ParsedMail = await simpleParser(raw);
      const headers = new Map(
        parsed.headerLines.map((h) => [
          h.key,
          h.line
            .slice(h.line.indexOf(':') + 1)
            .replace(/\r?\n[ \t]+/g, ' ')
            .trim(),
        ]),
      );
      return {
        to: headers.get('to') ?? '',
        text: parsed.text ?? '',
        html: typeof parsed.html === 'string' ? parsed.html : '',
        headers,
        raw,
      };
    }),
  );
}

function confirmToken(mail: Mail): string {
  const match = /\/newsletter\/confirm\?token=([a-z0-9]+)/.exec(mail.text);
  if (!match) throw new Error(`no confirm link in\n${mail.text}`);
  return match[1]!;
}

describe('double opt-in', () => {
  it('stores a pending sign-up and mails a one-time link kept only as its hash', async () => {
    runtime = await makeRuntime();
    expect(await subscribe(runtime, 'new@example.com', '10.0.0.1')).toEqual({ mailed: true });
    const stored = (await runtime.store.subscribers.getByEmail('new@example.com'))!;
    expect(subscriberStatus(stored)).toBe('pending');
    const [mail] = await outbox(runtime);
    expect(mail!.to).toBe('new@example.com');
    const token = confirmToken(mail!);
    expect(JSON.stringify(stored)).not.toContain(token);
    expect(await runtime.store.subscribers.listConfirmed()).toEqual([]);

    expect(await confirmSubscription(runtime, token)).toEqual({ kind: 'confirmed', email: 'new@example.com' });
    expect(subscriberStatus((await runtime.store.subscribers.getByEmail('new@example.com'))!)).toBe('confirmed');
    expect(await confirmSubscription(runtime, token)).toEqual({ kind: 'unknown' });
    // Confirmed: signing up again sends nothing.
    expect(await subscribe(runtime, 'new@example.com', '10.0.0.1')).toEqual({ mailed: false });
    expect(await outbox(runtime)).toHaveLength(1);
  });

  it('resends while pending, at most 3 mails a day per address, with the same answer', async () => {
    runtime = await makeRuntime();
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await subscribe(runtime, 'again@example.com', `10.0.1.${i}`));
    expect(results.map((r) => r.mailed)).toEqual([true, true, true, false, false]);
    const mails = await outbox(runtime);
    expect(mails).toHaveLength(CONFIRM_LIMITS.perAddress.limit);
    // Only the newest link works: a resend replaces the previous one.
    expect(await confirmSubscription(runtime, confirmToken(mails[0]!))).toEqual({ kind: 'unknown' });
  });

  it('limits sign-ups per IP with a 429, confirmed addresses included', async () => {
    runtime = await makeRuntime();
    for (let i = 0; i < CONFIRM_LIMITS.perIp.limit; i++) await subscribe(runtime, `ip${i}@example.com`, '10.0.2.1');
    const error = await appErrorOf(subscribe(runtime, 'one-more@example.com', '10.0.2.1'));
    expect(error?.status).toBe(429);
    // A confirmed address is refused the same way: the 429 must not tell confirmed addresses apart.
    await runtime.store.subscribers.upsert({
      id: 'known',
      email: 'known@example.com',
      token: 'knowntoken00000000000',
      createdAt: '2025-01-01T00:00:00.000Z',
    });
    expect((await appErrorOf(subscribe(runtime, 'known@example.com', '10.0.2.1')))?.status).toBe(429);
    expect(Number(error?.headers?.['Retry-After'])).toBeGreaterThan(60);
    expect(await runtime.store.subscribers.getByEmail('one-more@example.com')).toBeUndefined();
    expect((await subscribe(runtime, 'one-more@example.com', '10.0.2.2')).mailed).toBe(true);
  });

  it('refuses an expired link, and asks an address that unsubscribed to confirm again', async () => {
    runtime = await makeRuntime();
    await subscribe(runtime, 'late@example.com', '10.0.3.1');
    const stored = (await runtime.store.subscribers.getByEmail('late@example.com'))!;
    await runtime.store.subscribers.update(stored.id, { confirmExpiresAt: new Date(Date.now() - 1000).toISOString() });
    expect(await confirmSubscription(runtime, confirmToken((await outbox(runtime))[0]!))).toEqual({ kind: 'expired' });

    await subscribe(runtime, 'late@example.com', '10.0.3.1');
    await confirmSubscription(runtime, confirmToken((await outbox(runtime))[1]!));
    await unsubscribe(runtime, stored.token);
    expect(subscriberStatus((await runtime.store.subscribers.getByEmail('late@example.com'))!)).toBe('unsubscribed');
    await subscribe(runtime, 'late@example.com', '10.0.3.1');
    expect(subscriberStatus((await runtime.store.subscribers.getByEmail('late@example.com'))!)).toBe('pending');
  });

  it('reads records from before double opt-in as confirmed', async () => {
    runtime = await makeRuntime();
    await runtime.store.subscribers.upsert({
      id: 'legacy',
      email: 'old@example.com',
      token: 'legacytoken0000000000',
      createdAt: '2025-01-01T00:00:00.000Z',
    });
    expect((await runtime.store.subscribers.listConfirmed()).map((s) => s.email)).toEqual(['old@example.com']);
    expect(await runtime.store.subscribers.countByStatus()).toEqual({ confirmed: 1, pending: 0, unsubscribed: 0 });
  });
});

describe('CSV export', () => {
  it('quotes every cell and defuses formulas', async () => {
    expect(csvCell('=HYPERLINK("http://x")')).toBe(`"'=HYPERLINK(""http://x"")"`);
    for (const lead of ['+', '-', '@', '\t', '\r']) expect(csvCell(`${lead}1`)).toBe(`"'${lead}1"`);
    expect(csvCell('plain@example.com')).toBe('"plain@example.com"');
    runtime = await makeRuntime();
    await runtime.store.subscribers.upsert({
      id: 'a',
      email: '-2+3@example.com',
      token: 'atoken000000000000000',
      createdAt: '2025-01-01T00:00:00.000Z',
    });
    const csv = await exportSubscribersCsv(runtime);
    expect(csv.split('\r\n')).toEqual([
      '"email","status","signed_up","confirmed","unsubscribed"',
      `"'-2+3@example.com","confirmed","2025-01-01T00:00:00.000Z","",""`,
      '',
    ]);
  });
});

describe('the briefing', () => {
  it('is due on weekdays from BRIEFING_TIME in BRIEFING_TZ', () => {
    // Monday 2026-11-23 06:30 UTC is 07:30 in Berlin.
    const monday = localTime(new Date('2026-11-23T06:30:00Z'), 'Europe/Berlin');
    expect(monday).toMatchObject({ date: '2026-11-23', weekday: 1, minutes: 450 });
    expect(isBriefingDue(monday, '07:00')).toBe(true);
    expect(isBriefingDue(monday, '08:00')).toBe(false);
    // Late Friday in New York is already Saturday in UTC: the day is the zone's.
    expect(localTime(new Date('2026-11-28T03:00:00Z'), 'America/New_York')).toMatchObject({ date: '2026-11-27', weekday: 5 });
    expect(isBriefingDue(localTime(new Date('2026-11-28T09:00:00Z'), 'UTC'), '07:00')).toBe(false);
  });

  it('goes out once a day to confirmed subscribers, with the one-click headers, into the outbox', async () => {
    runtime = await makeRuntime();
    const now = new Date();
    await runtime.store.articles.insert(
      articleRecord({
        title: 'Fresh news',
        slug: 'fresh-news',
        publishedAt: new Date(now.getTime() - 60_000).toISOString(),
        isEditorsPick: true,
      }),
    );
    await runtime.store.articles.insert(articleRecord({ title: 'Old news', slug: 'old-news', publishedAt: '2020-01-01T00:00:00.000Z' }));
    await runtime.store.subscribers.upsert({
      id: 's1',
      email: 'one@example.com',
      token: 'onetoken0000000000000',
      createdAt: now.toISOString(),
    });
    await subscribe(runtime, 'pending@example.com', '10.0.4.1');
    const first = await runBriefing(runtime, { trigger: 'script', now });
    expect(first).toMatchObject({ outcome: 'sent', recipients: 1, sent: 1, failed: 0, unknown: 0 });
    const mails = (await outbox(runtime)).filter((m) => m.to === 'one@example.com');
    expect(mails).toHaveLength(1);
    expect(mails[0]!.headers.get('list-unsubscribe')).toBe(
      '<http://localhost:4321/api/newsletter/unsubscribe?token=onetoken0000000000000>',
    );
    expect(mails[0]!.headers.get('list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click');
    expect(mails[0]!.text).toContain('Fresh news');
    expect(mails[0]!.html).toContain('Fresh news');
    expect(mails[0]!.text).not.toContain('Old news');
    expect(await runBriefing(runtime, { trigger: 'schedule', now })).toMatchObject({ outcome: 'already-sent' });
    expect((await outbox(runtime)).filter((m) => m.to === 'one@example.com')).toHaveLength(1);
    expect(await runBriefing(runtime, { trigger: 'script', now, force: true })).toMatchObject({ outcome: 'sent', sent: 1 });
    expect((await outbox(runtime)).filter((m) => m.to === 'one@example.com')).toHaveLength(2);
  });
});

describe('the send log', () => {
  it('is append-only, survives a torn last line, and keeps the latest state per recipient', async () => {
    const dataDir = makeTempDir();
    let store = await openStore(dataDir, 'write');
    await store.briefings.recordDeliveries('2026-11-23-1', [{ subscriberId: 'a', state: 'attempting', at: 't1' }]);
    await store.briefings.recordDeliveries('2026-11-23-1', [{ subscriberId: 'a', state: 'sent', at: 't2', messageId: '<m@x>' }]);
    await store.briefings.recordDeliveries('2026-11-23-1', [{ subscriberId: 'b', state: 'attempting', at: 't3' }]);
    await store.close();
    const file = path.join(dataDir, 'briefings', '2026-11-23-1.jsonl');
    expect(fs.readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(3);
    // A crash in the middle of an append leaves half a line.
    fs.appendFileSync(file, '{"subscriberId":"c","sta');

    store = await openStore(dataDir, 'write');
    expect([...(await store.briefings.deliveries('2026-11-23-1')).values()].map((d) => [d.subscriberId, d.state])).toEqual([
      ['a', 'sent'],
      ['b', 'attempting'],
    ]);
    await store.briefings.recordDeliveries('2026-11-23-1', [{ subscriberId: 'd', state: 'attempting', at: 't4' }]);
    await store.close();
    const reopened = await openStore(dataDir, 'read');
    expect([...(await reopened.briefings.deliveries('2026-11-23-1')).keys()]).toEqual(['a', 'b', 'd']);
    await expect(reopened.briefings.recordDeliveries('2026-11-23-1', [{ subscriberId: 'e', state: 'sent', at: 't5' }])).rejects.toThrow(
      /read-only/,
    );
    await reopened.close();
    await expect(store.briefings.deliveries('../escape')).rejects.toThrow(/Invalid briefing run id/);
  });
});

describe('a mail server that is down', () => {
  it('pauses the run after failures in a row, and the next run sends to everyone once', { timeout: 60_000 }, async () => {
    const dataDir = makeTempDir();
    // Port 1: nothing listens, every connection is refused before any message is handed over.
    runtime = await makeRuntime(dataDir);
    runtime.config = { ...runtime.config, SMTP_URL: 'smtp://127.0.0.1:1' };
    await runtime.store.articles.insert(articleRecord({ title: 'Outage day', publishedAt: new Date().toISOString(), isEditorsPick: true }));
    const emails = Array.from({ length: 9 }, (_, i) => `down${i}@example.com`);
    for (const [i, email] of emails.entries()) {
      await runtime.store.subscribers.upsert({
        id: `d${i}`,
        email,
        token: `downtoken${String(i).padStart(12, '0')}`,
        createdAt: new Date().toISOString(),
      });
    }
    const paused = await appErrorOf(runBriefing(runtime, { trigger: 'script' }));
    expect(paused?.status).toBe(503);
    expect(paused?.message).toMatch(/paused/);
    const [run] = await runtime.store.briefings.runsFor((await runtime.store.briefings.latest())!.date);
    expect(run!.status).toBe('sending');
    const log = [...(await runtime.store.briefings.deliveries(run!.id)).values()];
    expect(log.length).toBeGreaterThanOrEqual(PAUSE_AFTER);
    expect(log.length).toBeLessThan(emails.length);
    expect(log.every((d) => d.state === 'failed' && d.retry === true)).toBe(true);

    // The mail server is back: the run resumes, retrying those it certainly never handed over.
    const smtp = await startSmtp();
    try {
      // A new mailer for the new address: the one on the runtime was made for the old one.
      const back = { ...runtime, mailer: undefined, config: { ...runtime.config, SMTP_URL: smtp.url } };
      expect(await runBriefing(back, { trigger: 'script' })).toMatchObject({
        outcome: 'sent',
        recipients: 9,
        sent: 9,
        failed: 0,
        unknown: 0,
      });
      expect(smtp.messages.map((m) => m.to[0]).sort()).toEqual([...emails].sort());
      for (const service of back.services.values()) await service.stop();
    } finally {
      await smtp.stop();
    }
  });
});
