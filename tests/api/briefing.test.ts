/**
 * The morning briefing end to end, against a real SMTP server: sign-up, confirmation mail and link,
 * `npm run briefing` (once a day, also while the server runs), one-click unsubscribe, and a send
 * killed mid-way that resumes without sending anyone a second copy.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, makeDataDir, startServer, type TestServer } from '../helpers/server.ts';
import { startSmtp, type ReceivedMail, type TestSmtp } from '../helpers/smtp.ts';
import { TestClient, adminClient, createArticle, read, startApiServer } from './support.ts';
import { openStore } from '../../src/store/index.ts';
import { storeEnvFor, storeOptionsFor } from '../helpers/postgres.ts';
import type { SubscriberListing } from '../../src/schemas/newsletter.ts';
import { freePort } from '../../scripts/server-process.ts';

type ScriptRun = { code: number | null; output: string; summary: string };

/** Runs `npm run briefing` (its script, on this Node) against a DATA_DIR; `onStart` gets the child (to kill it). */
async function runBriefingScript(
  env: Record<string, string>,
  args: string[] = [],
  onStart?: (child: ReturnType<typeof spawn>) => void,
): Promise<ScriptRun> {
  const store = await storeEnvFor(env.DATA_DIR);
  const child = spawn(process.execPath, [path.join(ROOT, 'scripts/briefing.ts'), ...args], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production', SEED: 'none', BRIEFING_TIME: 'off', ...store, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  onStart?.(child);
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output, summary: output.split('\n')[0] ?? '' })));
}

function linkIn(text: string, pathname: string): string {
  const match = new RegExp(`https?://[^\\s"<>]+${pathname.replace(/\//g, '\\/')}\\?token=[a-z0-9]+`).exec(text);
  if (!match) throw new Error(`No ${pathname} link in:\n${text}`);
  return match[0];
}

/** A header as it was sent (unfolded), not as mailparser interprets it. */
function header(mail: ReceivedMail, name: string): string | undefined {
  const line = mail.parsed.headerLines.find((h) => h.key === name.toLowerCase())?.line;
  return line
    ?.slice(line.indexOf(':') + 1)
    .replace(/\r?\n[ \t]+/g, ' ')
    .trim();
}

describe('the briefing with a running server', () => {
  let smtp: TestSmtp;
  let server: TestServer;
  let env: Record<string, string>;

  beforeAll(async () => {
    smtp = await startSmtp();
    const port = await freePort();
    env = {
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Meridian Briefing <briefing@meridian.test>',
      SITE_URL: `http://127.0.0.1:${port}`,
      BRIEFING_TIME: 'off',
      PORT: String(port),
    };
    server = await startApiServer(env);
    env.DATA_DIR = server.dataDir;
  });

  afterAll(async () => {
    await server?.stop();
    await smtp?.stop();
  });

  it('signs up, confirms, sends once a day, and unsubscribes with one click', async () => {
    const admin = await adminClient(server);
    const pick = await createArticle(admin, {
      title: 'Harbour reopens after the storm',
      dek: 'Ships are back by noon.',
      status: 'published',
      isEditorsPick: true,
      section: 'world',
    });
    const other = await createArticle(admin, { title: 'Markets steady before the vote', status: 'published', section: 'business' });

    // Sign-up: the same answer as before, and a confirmation mail, not a subscription yet.
    for (const email of ['reader@example.com', 'second@example.com']) {
      expect(await read(await new TestClient(server.url).post('/api/newsletter/subscribe', { email }))).toEqual({
        status: 200,
        body: { message: 'Subscribed' },
      });
    }
    const [confirmation] = await smtp.waitFor('reader@example.com');
    expect(confirmation!.parsed.subject).toBe('Confirm your subscription to Meridian News');
    expect(confirmation!.parsed.from?.text).toContain('briefing@meridian.test');
    expect(confirmation!.parsed.text).toMatch(/If you did not sign up, ignore this e-mail/);
    expect(confirmation!.parsed.html).toContain('ignore this e-mail');
    const confirmUrl = linkIn(confirmation!.parsed.text!, '/newsletter/confirm');
    expect(confirmation!.parsed.html).toContain(confirmUrl);
    expect(confirmUrl.startsWith(env.SITE_URL!)).toBe(true);
    expect(header(confirmation!, 'List-Unsubscribe')).toBeUndefined();

    let listing = await read<SubscriberListing>(await admin.get('/api/newsletter/subscribers'));
    expect(listing.body.counts).toEqual({ confirmed: 0, pending: 2, unsubscribed: 0 });

    // The link confirms once; a second use says why not.
    const confirmed = await fetch(confirmUrl);
    expect(confirmed.status).toBe(200);
    expect(await confirmed.text()).toContain('Your subscription is confirmed');
    const reused = await fetch(confirmUrl);
    expect(reused.status).toBe(404);
    expect(await reused.text()).toContain('already used');
    const [secondConfirmation] = await smtp.waitFor('second@example.com');
    expect((await fetch(linkIn(secondConfirmation!.parsed.text!, '/newsletter/confirm'))).status).toBe(200);
    listing = await read(await admin.get('/api/newsletter/subscribers'));
    expect(listing.body.counts).toEqual({ confirmed: 2, pending: 0, unsubscribed: 0 });
    expect(listing.body.lastBriefing).toBeNull();

    // npm run briefing while the server holds DATA_DIR: it asks the server.
    const first = await runBriefingScript(env);
    expect(first.code, first.output).toBe(0);
    expect(first.output).toContain('asking it to send');
    expect(first.output).toMatch(/Briefing \S+ sent/);
    const [, briefing] = await smtp.waitFor('reader@example.com', 2);
    expect(briefing!.parsed.subject).toContain('Meridian News briefing');
    expect(briefing!.parsed.subject).toContain('Harbour reopens after the storm');
    const oneClick = /^<(http[^>]+)>$/.exec(header(briefing!, 'List-Unsubscribe') ?? '')?.[1];
    expect(oneClick).toMatch(new RegExp(`^${env.SITE_URL}/api/newsletter/unsubscribe\\?token=[a-z0-9]+$`));
    expect(header(briefing!, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    // Both parts, absolute links to both articles, and a visible unsubscribe link.
    const html = briefing!.parsed.html as string;
    const text = briefing!.parsed.text!;
    for (const article of [pick, other]) {
      expect(html).toContain(`${env.SITE_URL}/article/${article.slug}`);
      expect(text).toContain(`${env.SITE_URL}/article/${article.slug}`);
      // The beacon on the article page reads the tag and counts the view as the newsletter's (issue 33).
      expect(text).toContain(`${env.SITE_URL}/article/${article.slug}?ref=newsletter`);
      expect(text).toContain(article.title);
    }
    expect(html).toContain("Editor's pick");
    expect(html).toMatch(/<meta name="viewport"/);
    const visible = linkIn(text, '/newsletter/unsubscribe');
    expect(html).toContain(`>Unsubscribe</a>`);
    expect(html).toContain(visible);
    expect(smtp.to('second@example.com')).toHaveLength(2);

    // A second run the same day sends nothing.
    const second = await runBriefingScript(env);
    expect(second.code, second.output).toBe(0);
    expect(second.output).toContain('already sent');
    // The server answers the run call after its sends end, so any mail the run sent is in by now.
    expect(smtp.to('reader@example.com')).toHaveLength(2);
    expect(smtp.to('second@example.com')).toHaveLength(2);
    listing = await read(await admin.get('/api/newsletter/subscribers'));
    expect(listing.body.lastBriefing).toMatchObject({ status: 'sent', recipients: 2, sent: 2, failed: 0, unknown: 0, forced: false });

    // One-click unsubscribe as a mailbox provider sends it: a form POST, no cookie, its own Origin.
    const unsubscribed = await fetch(oneClick!, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: 'https://mail.provider.example' },
      body: 'List-Unsubscribe=One-Click',
    });
    expect(unsubscribed.status, await unsubscribed.clone().text()).toBe(200);
    listing = await read(await admin.get('/api/newsletter/subscribers?status=unsubscribed'));
    expect(listing.body.items.map((s: { email: string }) => s.email)).toEqual(['reader@example.com']);

    // --force sends again today, to who is still subscribed.
    const forced = await runBriefingScript(env, ['--force']);
    expect(forced.code, forced.output).toBe(0);
    await smtp.waitFor('second@example.com', 3);
    // The script has exited after the server's answer, which comes after every send of the run.
    expect(smtp.to('reader@example.com')).toHaveLength(2);
  });

  it('the visible unsubscribe link works too, and the origin check still guards other POSTs', async () => {
    await new TestClient(server.url).post('/api/newsletter/subscribe', { email: 'link@example.com' });
    const [confirmation] = await smtp.waitFor('link@example.com');
    await fetch(linkIn(confirmation!.parsed.text!, '/newsletter/confirm'));
    const forced = await runBriefingScript(env, ['--force']);
    expect(forced.code, forced.output).toBe(0);
    const [, briefing] = await smtp.waitFor('link@example.com', 2);
    const page = await fetch(linkIn(briefing!.parsed.text!, '/newsletter/unsubscribe'));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('You have been unsubscribed');
    const admin = await adminClient(server);
    const listing = await read<SubscriberListing>(await admin.get('/api/newsletter/subscribers?q=link%40'));
    expect(listing.body.items[0]).toMatchObject({ email: 'link@example.com', status: 'unsubscribed' });
    // The exemption is for that one path: a cross-site sign-up is still refused.
    const crossSite = await fetch(`${server.url}/api/newsletter/subscribe`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: 'https://evil.example' },
      body: JSON.stringify({ email: 'x@example.com' }),
    });
    expect(crossSite.status).toBe(403);
  });

  it('refuses the internal run call without the key', async () => {
    const response = await fetch(`${server.url}/api/newsletter/briefing/run`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Briefing-Key': 'f'.repeat(64) },
      body: '{}',
    });
    expect(response.status).toBe(403);
    expect((await response.json()).error).toBe('Invalid briefing key');
  });
});

/** A DATA_DIR with a fresh editor's pick and confirmed subscribers, written through the store (no server holds it). */
async function seedDataDir(recipients: string[]): Promise<string> {
  const dataDir = makeDataDir();
  const store = await openStore(dataDir, 'write', await storeOptionsFor(dataDir));
  const now = new Date().toISOString();
  await store.articles.insert({
    id: 'kill-article',
    title: 'The night shift',
    slug: 'the-night-shift',
    bodyHtml: '<p>Body</p>',
    section: 'world',
    tags: [],
    authorName: 'Desk',
    createdAt: now,
    updatedAt: now,
    publishedAt: now,
    readingTime: 2,
    isEditorsPick: true,
    isBreaking: false,
    status: 'published',
  });
  for (const [i, email] of recipients.entries()) {
    await store.subscribers.upsert({
      id: `sub-${i}`,
      email,
      token: `killtoken${String(i).padStart(10, '0')}`,
      createdAt: now,
      confirmedAt: now,
    });
  }
  await store.close();
  return dataDir;
}

/** Checks nobody got two copies and everyone got one, except the recipients logged as interrupted; answers those. */
async function expectOnceEach(smtp: TestSmtp, dataDir: string, recipients: string[]): Promise<string[]> {
  const counts = new Map<string, number>();
  for (const m of smtp.messages) for (const to of m.to) counts.set(to, (counts.get(to) ?? 0) + 1);
  for (const [to, count] of counts) expect(count, to).toBe(1);
  const store = await openStore(dataDir, 'read', await storeOptionsFor(dataDir));
  const run = (await store.briefings.latest())!;
  const log = await store.briefings.deliveries(run.id);
  await store.close();
  const unknown = [...log.values()].filter((d) => d.state === 'attempting').map((d) => recipients[Number(d.subscriberId.slice(4))]!);
  expect(run).toMatchObject({
    status: 'sent',
    recipients: recipients.length,
    unknown: unknown.length,
    sent: recipients.length - unknown.length,
    failed: 0,
  });
  expect(new Set([...counts.keys(), ...unknown])).toEqual(new Set(recipients));
  return unknown;
}

describe('a briefing killed mid-send', () => {
  let smtp: TestSmtp;
  const recipients = Array.from({ length: 12 }, (_, i) => `kill-${String(i).padStart(2, '0')}@example.com`);

  beforeAll(async () => {
    smtp = await startSmtp();
  });

  afterAll(async () => {
    await smtp?.stop();
  });

  it('resumes without sending anyone a second copy', async () => {
    // No server: the script opens the store itself.
    const dataDir = await seedDataDir(recipients);
    const env = { DATA_DIR: dataDir, SMTP_URL: smtp.url, SITE_URL: 'http://news.test' };

    // The SMTP server never answers the 6th message: the script is killed while that transaction is open.
    const held = recipients[5]!;
    const arrived = smtp.holdNext(held);
    let killed = false;
    const interrupted = await runBriefingScript(env, [], (child) => {
      void arrived.then(() => {
        killed = child.kill('SIGKILL');
      });
    });
    expect(killed, interrupted.output).toBe(true);
    expect(interrupted.code).toBeNull();
    const before = new Set(smtp.messages.flatMap((m) => m.to));
    expect(before.has(held)).toBe(false);
    expect(before.size).toBeLessThan(recipients.length);

    const resumed = await runBriefingScript(env);
    expect(resumed.code, resumed.output).toBe(0);
    expect(resumed.output).toMatch(/Briefing \S+ sent/);
    const again = await runBriefingScript(env);
    expect(again.output).toContain('already sent');

    // Nobody got two copies; the held recipient (and any other in flight at the kill) is "unknown", not resent.
    const unknown = await expectOnceEach(smtp, dataDir, recipients);
    expect(unknown).toContain(held);
    expect(resumed.output).toContain(`${unknown.length} recipient(s) were being sent to`);
  });

  it('resumes by itself when the server sending it is killed and restarted', async () => {
    smtp.messages.length = 0;
    const names = recipients.map((r) => r.replace('kill-', 'server-kill-'));
    const dataDir = await seedDataDir(names);
    const env = { SMTP_URL: smtp.url, SITE_URL: 'http://news.test', TRUST_PROXY: 'true' };
    let server = await startServer({ dataDir, env });
    const held = names[4]!;
    const arrived = smtp.holdNext(held);
    try {
      // npm run briefing asks the server; the server is killed while the SMTP server holds a message.
      const script = runBriefingScript({ ...env, DATA_DIR: dataDir });
      await arrived;
      await server.kill();
      expect((await script).code).not.toBe(0);
      expect(new Set(smtp.messages.flatMap((m) => m.to)).size).toBeLessThan(names.length);

      // The restarted server finds today's run unfinished and resumes it (BRIEFING_TIME is off: no new runs).
      server = await startServer({ dataDir, env });
      const admin = new TestClient(server.url);
      await admin.login();
      const deadline = Date.now() + 20_000;
      for (;;) {
        const { body } = await read<SubscriberListing>(await admin.get('/api/newsletter/subscribers'));
        if (body.lastBriefing?.status === 'sent') break;
        if (Date.now() > deadline) throw new Error(`The briefing was not resumed:\n${server.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(server.output()).toContain('[briefing] resuming');
      const again = await runBriefingScript({ ...env, DATA_DIR: dataDir });
      expect(again.output).toContain('already sent');
    } finally {
      await server.stop();
    }
    const unknown = await expectOnceEach(smtp, dataDir, names);
    expect(unknown).toContain(held);
  });
});
