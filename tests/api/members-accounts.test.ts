/**
 * Readers' accounts (issue 48): sign-in by a one-time link, member sessions (never staff), the profile,
 * the export, deleting an account, and members-only comments; one server for the file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import type { Member, PublicMember } from '../../src/schemas/member.ts';
import type { Subscriber } from '../../src/schemas/newsletter.ts';
import { latestSignInLink, outboxFilesFor, readMail, signInMember } from '../helpers/members.ts';
import { TestClient, adminClient, expectError, read, readDataFile, startApiServer, withTestDatabase } from './support.ts';
import { testingPostgres } from '../helpers/postgres.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startApiServer();
});

afterAll(async () => {
  await server?.stop();
});

/** The stored members, read beside the server (readPgDocument has no `members` case yet: the table is read here). */
async function storedMembers(): Promise<Member[]> {
  if (testingPostgres())
    return withTestDatabase(server.dataDir, async (db) =>
      (await db.query<{ doc: Member }>('SELECT doc FROM members ORDER BY created_at')).rows.map((r) => r.doc),
    );
  return (await readDataFile<{ members: Member[] }>(server.dataDir, 'members')).members;
}

async function storedSubscriber(email: string): Promise<Subscriber | undefined> {
  return (await readDataFile<{ subscribers: Subscriber[] }>(server.dataDir, 'subscribers')).subscribers.find((s) => s.email === email);
}

/** A client carrying a member's session cookie (and nothing else). */
function memberClient(cookie: string): TestClient {
  const client = new TestClient(server.url);
  const [name, value] = cookie.split('=') as [string, string];
  client.cookies.set(name, value);
  return client;
}

async function askForLink(email: string, body: Record<string, unknown> = {}): Promise<Response> {
  return new TestClient(server.url).post('/api/members/sign-in', { email, ...body });
}

describe('sign-in by link', () => {
  it('answers the same for a new and a known address, with the copy for each in the mail', async () => {
    const fresh = await read(await askForLink('New.Reader@Example.com', { name: 'Nora Reader' }));
    expect(fresh.status).toBe(200);
    const [newMail] = outboxFilesFor(server.dataDir, 'new.reader@example.com');
    expect((await readMail(newMail!)).subject).toMatch(/create your .* account/i);

    await signInMember(server.url, server.dataDir, 'known@example.com');
    const known = await read(await askForLink('known@example.com'));
    expect(known).toEqual(fresh);
    const knownMail = await readMail(outboxFilesFor(server.dataDir, 'known@example.com').at(-1)!);
    expect(knownMail.subject).toMatch(/sign-in link/i);
    expect(knownMail.text).toMatch(/works once, for 1 hour/);
  });

  it('refuses bad input (400) and a cross-site request (403)', async () => {
    for (const body of [
      { email: 'nope' },
      {},
      { email: 'a@example.com', next: 'https://evil.example/' },
      { email: 'a@example.com', next: '//evil.example' },
    ]) {
      await expectError(await new TestClient(server.url).post('/api/members/sign-in', body), 400);
    }
    const crossSite = await fetch(new URL('/api/members/sign-in', server.url), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: 'https://evil.example' },
      body: JSON.stringify({ email: 'victim@example.com' }),
    });
    expect(crossSite.status).toBe(403);
  });

  it('makes a new member from the link: name, newsletter confirmed, history, welcome mail, cookie and next', async () => {
    const email = 'signup@example.com';
    await askForLink(email, { name: 'Sam Signup', newsletter: true, next: '/section/world' });
    const link = await latestSignInLink(server.dataDir, email);
    const browser = new TestClient(server.url);
    const followed = await browser.get(link);
    expect(followed.status).toBe(303);
    expect(followed.headers.get('location')).toBe('/section/world');
    const cookies = followed.headers.getSetCookie();
    const session = cookies.find((c) => c.startsWith('member_session='))!;
    expect(session).toMatch(/HttpOnly/i);
    expect(session).toMatch(/SameSite=Lax/i);
    const hint = cookies.find((c) => c.startsWith('member_signed_in=1'))!;
    expect(hint).not.toMatch(/HttpOnly/i);

    const me = await read<{ member: PublicMember }>(await browser.get('/api/members/me'));
    expect(me.status).toBe(200);
    expect(me.body.member).toMatchObject({ email, name: 'Sam Signup', newsletter: true, status: 'free', level: 'free' });
    const stored = (await storedMembers()).find((m) => m.email === email)!;
    expect(stored.history.map((line) => line.kind)).toEqual(['signed-up']);
    const subscriber = await storedSubscriber(email);
    expect(subscriber?.confirmedAt).toBeDefined();
    expect(subscriber?.unsubscribedAt).toBeUndefined();
    const mails = await Promise.all(outboxFilesFor(server.dataDir, email).map(readMail));
    expect(mails.map((mail) => mail.subject)).toEqual([expect.stringMatching(/create your/i), expect.stringMatching(/^Welcome to /)]);

    // Signing in again: a history line, no second welcome.
    await signInMember(server.url, server.dataDir, email);
    expect((await storedMembers()).find((m) => m.email === email)!.history.map((line) => line.kind)).toEqual(['signed-up', 'signed-in']);
    expect(outboxFilesFor(server.dataDir, email)).toHaveLength(3);
  });

  it('works once: a second click, or two at once, signs in one browser only', async () => {
    const email = 'twice@example.com';
    await askForLink(email);
    const link = await latestSignInLink(server.dataDir, email);
    const [a, b] = await Promise.all([new TestClient(server.url).get(link), new TestClient(server.url).get(link)]);
    const locations = [a, b].map((response) => response.headers.get('location')).sort();
    expect(locations).toEqual(['/account', '/account/sign-in?error=expired']);
    const again = await new TestClient(server.url).get(link);
    expect(again.headers.get('location')).toBe('/account/sign-in?error=expired');
    expect(again.headers.getSetCookie().some((c) => /^member_session=[a-z2-7]/.test(c))).toBe(false);
    for (const bogus of ['/api/members/confirm', '/api/members/confirm?token=abc', `/api/members/confirm?token=${'a'.repeat(32)}`]) {
      expect((await new TestClient(server.url).get(bogus)).headers.get('location')).toBe('/account/sign-in?error=expired');
    }
    expect((await storedMembers()).filter((m) => m.email === email)).toHaveLength(1);
  });

  it('limits links per address and per client IP (429)', async () => {
    const email = 'flood@example.com';
    for (let i = 0; i < 5; i++) expect((await askForLink(email)).status).toBe(200);
    await expectError(await askForLink(email), 429);
    expect(outboxFilesFor(server.dataDir, email)).toHaveLength(5);
    const client = new TestClient(server.url);
    for (let i = 0; i < 10; i++) expect((await client.post('/api/members/sign-in', { email: `ip${i}@example.com` })).status).toBe(200);
    await expectError(await client.post('/api/members/sign-in', { email: 'ip-last@example.com' }), 429);
  });
});

describe('member sessions', () => {
  it('a member token is nothing to the staff check, and a staff token nothing to the member check', async () => {
    const { cookie } = await signInMember(server.url, server.dataDir, 'not-staff@example.com');
    const token = cookie.split('=')[1]!;
    const asStaff = new TestClient(server.url);
    asStaff.cookies.set('session', token);
    await expectError(await asStaff.get('/api/auth/me'), 401);
    // The member session itself is untouched by that attempt.
    expect((await memberClient(cookie).get('/api/members/me')).status).toBe(200);

    const admin = await adminClient(server);
    const staffToken = admin.cookies.get('session')!;
    const asMember = new TestClient(server.url);
    asMember.cookies.set('member_session', staffToken);
    await expectError(await asMember.get('/api/members/me'), 401, /sign in/i);
    expect((await admin.get('/api/auth/me')).status).toBe(200);
  });

  it('signed out: 401, and a stale member cookie is cleared', async () => {
    await expectError(await new TestClient(server.url).get('/api/members/me'), 401);
    const stale = new TestClient(server.url);
    stale.cookies.set('member_session', 'a'.repeat(32));
    stale.cookies.set('member_signed_in', '1');
    await expectError(await stale.get('/api/members/me'), 401);
    expect(stale.cookies.has('member_session')).toBe(false);
    expect(stale.cookies.has('member_signed_in')).toBe(false);
  });
});
