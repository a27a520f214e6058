/**
 * The briefing against a mail server that fails mid-run, on a real store (lowdb, or PostgreSQL with
 * TEST_STORE=pg) and a real smtp-server made to stall after connect, to drop the connection after
 * DATA, and to refuse for a while: counting the messages each address received, nobody gets the
 * briefing twice, and everyone not in doubt gets it by the end (after retries and the next run).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RETRY_WINDOW_MS, runBriefing } from '../../src/server/briefing/briefing.ts';
import { setClock } from '../../src/server/clock.ts';
import { isServiceUnavailable, type ServiceUnavailableError } from '../../src/server/errors.ts';
import type { BriefingSummary } from '../../src/schemas/newsletter.ts';
import { startSmtp, type TestSmtp } from '../helpers/smtp.ts';
import { articleRecord, closeQuietly, makeRuntime } from './support.ts';

type TestRuntime = Awaited<ReturnType<typeof makeRuntime>>;

/** SMTP_TIMEOUT_MS in these tests: a stalled server is given up after a second. */
const TIMEOUT_MS = 1000;
const RECIPIENTS = 12;
/**
 * For the faults that start after a few messages: enough recipients left that more than PAUSE_AFTER
 * meet the fault however many the pool's 3 connections finish before it starts (a fast store sends
 * several in the 20 ms the test server waits).
 */
const MANY = 24;

let runtime: TestRuntime | undefined;
let smtp: TestSmtp | undefined;

afterEach(async () => {
  setClock(undefined);
  for (const service of runtime?.services.values() ?? []) await service.stop();
  await closeQuietly(runtime?.store);
  await smtp?.stop();
  runtime = undefined;
  smtp = undefined;
});

/** A runtime sending through `mail`, with today's editor's pick and RECIPIENTS confirmed subscribers. */
async function briefingRuntime(mail: TestSmtp, prefix: string, count = RECIPIENTS): Promise<{ rt: TestRuntime; emails: string[] }> {
  const rt = await makeRuntime();
  rt.config = { ...rt.config, SMTP_URL: mail.url, SMTP_TIMEOUT_MS: TIMEOUT_MS };
  const now = new Date().toISOString();
  await rt.store.articles.insert(articleRecord({ title: 'The storm passes', publishedAt: now, isEditorsPick: true }));
  const emails = Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(2, '0')}@example.com`);
  for (const [i, email] of emails.entries()) {
    await rt.store.subscribers.upsert({
      id: `${prefix}-${i}`,
      email,
      token: `${prefix}token${String(i).padStart(12, '0')}`,
      createdAt: now,
      confirmedAt: now,
    });
  }
  return { rt, emails };
}

/** Runs the briefing once: its summary, or the 503 of a paused run (anything else fails the test). */
async function runOnce(rt: TestRuntime): Promise<BriefingSummary | ServiceUnavailableError> {
  try {
    return await runBriefing(rt, { trigger: 'script' });
  } catch (error) {
    if (!isServiceUnavailable(error)) throw error;
    return error;
  }
}

/**
 * Each address got at most one message; the run is finished; everyone got exactly one except the
 * recipients left `attempting` (in doubt: the server may have taken theirs), who are never sent again.
 */
async function expectOnceEach(rt: TestRuntime, mail: TestSmtp, emails: string[]): Promise<{ inDoubt: string[] }> {
  const counts = new Map<string, number>();
  for (const message of mail.messages) for (const to of message.to) counts.set(to, (counts.get(to) ?? 0) + 1);
  for (const [to, count] of counts) expect(count, `messages to ${to}`).toBe(1);
  const run = (await rt.store.briefings.latest())!;
  const log = await rt.store.briefings.deliveries(run.id);
  const inDoubt = [...log.values()].filter((d) => d.state === 'attempting').map((d) => emails[Number(d.subscriberId.split('-').at(-1))]!);
  expect(run).toMatchObject({ status: 'sent', recipients: emails.length, failed: 0, unknown: inDoubt.length });
  for (const email of emails) if (!inDoubt.includes(email)) expect(counts.get(email), `messages to ${email}`).toBe(1);
  return { inDoubt };
}

describe('a mail server that fails mid-briefing', () => {
  it('stalls after connect: each delivery gives up after SMTP_TIMEOUT_MS, the run pauses, the next run sends the rest once', async () => {
    smtp = await startSmtp();
    const { rt, emails } = await briefingRuntime(smtp, 'stall', MANY);
    runtime = rt;
    const stalled = smtp.faultAfter(3, 'stall');
    const started = performance.now();
    const paused = await runOnce(rt);
    await stalled;
    expect(isServiceUnavailable(paused), JSON.stringify(paused)).toBe(true);
    expect((paused as ServiceUnavailableError).headers).toMatchObject({ 'Retry-After': '300' });
    expect((paused as ServiceUnavailableError).message).toMatch(/paused and resumes with the next run/);
    // Bounded by SMTP_TIMEOUT_MS and the 1 s + 4 s backoff, never by nodemailer's 10-minute socket timeout.
    expect(performance.now() - started).toBeLessThan(60_000);
    const during = await rt.store.briefings.deliveries((await rt.store.briefings.latest())!.id);
    const waiting = [...during.values()].filter((d) => d.state === 'failed' && d.retry === true);
    expect(waiting.length).toBeGreaterThan(0);
    expect(waiting[0]!.error).toMatch(/Greeting never received|Connection timeout/);
    const connectionsWhileStalled = smtp.connections();

    smtp.fault(undefined);
    expect(await runOnce(rt)).toMatchObject({ outcome: 'sent' });
    const { inDoubt } = await expectOnceEach(rt, smtp, emails);
    // At most the messages in flight when the connections were cut are in doubt (the pool sends one
    // again only when not a byte of it had gone).
    expect(inDoubt.length).toBeLessThanOrEqual(3);
    expect(connectionsWhileStalled).toBeGreaterThan(3);
  }, 120_000);

  it('drops the connection after DATA: the message may have gone, so it is never sent again', async () => {
    smtp = await startSmtp();
    const { rt, emails } = await briefingRuntime(smtp, 'drop', MANY);
    runtime = rt;
    const dropping = smtp.faultAfter(3, 'drop-after-data');
    const paused = await runOnce(rt);
    await dropping;
    // Five in a row in doubt: the run pauses rather than lose more.
    expect(isServiceUnavailable(paused), JSON.stringify(paused)).toBe(true);
    smtp.fault(undefined);
    expect(await runOnce(rt)).toMatchObject({ outcome: 'sent' });
    expect(await runOnce(rt)).toMatchObject({ outcome: 'already-sent' });
    const { inDoubt } = await expectOnceEach(rt, smtp, emails);
    expect(inDoubt.length).toBeGreaterThanOrEqual(5);
    // The server kept every dropped message: each address in doubt holds exactly one copy, not two.
    for (const email of inDoubt) expect(smtp.to(email), email).toHaveLength(1);
    expect(new Set(smtp.messages.flatMap((m) => m.to))).toEqual(new Set(emails));
  }, 60_000);

  it('refuses for a while (451): retried with backoff, then by the next run, everyone once', async () => {
    smtp = await startSmtp();
    const { rt, emails } = await briefingRuntime(smtp, 'busy');
    runtime = rt;
    // 451 to every recipient for 6 s: longer than one delivery's retries (1 s, then 4 s later).
    const over = smtp.faultAfter(2, 'refuse').then(
      () =>
        new Promise<void>((resolve) =>
          setTimeout(() => {
            smtp?.fault(undefined);
            resolve();
          }, 6000),
        ),
    );
    const outcomes: string[] = [];
    for (let run = 0; run < 3; run++) {
      const outcome = await runOnce(rt);
      outcomes.push(isServiceUnavailable(outcome) ? 'paused' : outcome.outcome);
      if (outcomes.at(-1) === 'sent') break;
      // A paused run is resumed later (the server waits 5 minutes): here once the refusals have ended.
      await over;
    }
    expect(outcomes.at(-1), outcomes.join(', ')).toBe('sent');
    expect(smtp.refusals()).toBeGreaterThan(0);
    const { inDoubt } = await expectOnceEach(rt, smtp, emails);
    expect(inDoubt).toEqual([]);
  }, 120_000);

  it('gives up on a recipient still refused for now once the run is RETRY_WINDOW_MS old, and finishes', async () => {
    smtp = await startSmtp();
    let now = Date.parse('2031-03-04T08:00:00Z');
    setClock(() => now);
    const { rt, emails } = await briefingRuntime(smtp, 'late', 1);
    await rt.store.articles.insert(articleRecord({ title: 'Morning news', publishedAt: '2031-03-04T06:00:00.000Z', isEditorsPick: true }));
    runtime = rt;
    smtp.fault('refuse');
    expect(isServiceUnavailable(await runOnce(rt))).toBe(true);
    // The same day, past the window: a morning briefing is not sent in the evening.
    now += RETRY_WINDOW_MS + 60_000;
    expect(await runOnce(rt)).toMatchObject({ outcome: 'sent', sent: 0, failed: 1, unknown: 0 });
    const [delivery] = (await rt.store.briefings.deliveries((await rt.store.briefings.latest())!.id)).values();
    expect(delivery).toMatchObject({ state: 'failed' });
    expect(delivery!.retry).toBeUndefined();
    smtp.fault(undefined);
    expect(await runOnce(rt)).toMatchObject({ outcome: 'already-sent' });
    expect(smtp.to(emails[0]!)).toHaveLength(0);
  }, 60_000);
});
