/**
 * Readers' accounts (issue 48): sign-in by a one-time link, member sessions (never staff), the profile,
 * the export, deleting an account, and members-only comments; one server for the file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, type TestServer } from '../helpers/server.ts';
import type { Member, PublicMember } from '../../src/schemas/member.ts';
import type { Subscriber } from '../../src/schemas/newsletter.ts';
import { latestSignInLink, outboxFilesFor, readMail, signInMember } from '../helpers/members.ts';
import {
  TestClient,
  adminClient,
  createArticle,
  expectError,
  read,
  readDataFile,
  startApiServer,
  waitFor,
  withTestDatabase,
} from './support.ts';
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
    const knownMails = await Promise.all(outboxFilesFor(server.dataDir, 'known@example.com').map(readMail));
    // The first link's "create your account", then (beside the welcome mail, whenever it lands) the known address's copy.
    expect(knownMails.filter((mail) => /create your/i.test(mail.subject))).toHaveLength(1);
    const knownMail = knownMails.find((mail) => /sign-in link/i.test(mail.subject))!;
    expect(knownMail).toBeDefined();
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
    // The welcome mail goes out beside the redirect, not before it.
    await waitFor('the welcome mail', async () => outboxFilesFor(server.dataDir, email).length === 2);
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

describe('the profile', () => {
  it('changes the name and the newsletter choice, the subscriber list following', async () => {
    const email = 'profile@example.com';
    const { cookie, member } = await signInMember(server.url, server.dataDir, email, 'First Name');
    expect(member).toMatchObject({ name: 'First Name', newsletter: false });
    const client = memberClient(cookie);
    const renamed = await read<{ member: PublicMember }>(
      await client.request('PATCH', '/api/members/me', { json: { name: '  Second Name ' } }),
    );
    expect(renamed.status).toBe(200);
    expect(renamed.body.member.name).toBe('Second Name');

    const on = await read<{ member: PublicMember }>(await client.request('PATCH', '/api/members/me', { json: { newsletter: true } }));
    expect(on.body.member.newsletter).toBe(true);
    expect((await storedSubscriber(email))?.confirmedAt).toBeDefined();
    const off = await read<{ member: PublicMember }>(await client.request('PATCH', '/api/members/me', { json: { newsletter: false } }));
    expect(off.body.member.newsletter).toBe(false);
    expect((await storedSubscriber(email))?.unsubscribedAt).toBeDefined();

    const stored = (await storedMembers()).find((m) => m.email === email)!;
    expect(stored.history.filter((line) => line.kind === 'profile-changed').map((line) => line.text)).toEqual([
      'Changed their name',
      'Subscribed to the newsletter',
      'Unsubscribed from the newsletter',
    ]);
    for (const body of [{}, { name: 'x'.repeat(101) }, { newsletter: 'yes' }, { email: 'other@example.com' }]) {
      await expectError(await client.request('PATCH', '/api/members/me', { json: body }), 400);
    }
    await expectError(await new TestClient(server.url).request('PATCH', '/api/members/me', { json: { name: 'Nobody' } }), 401);
  });

  it('exports the member’s data as a JSON attachment, without internal fields', async () => {
    const admin = await adminClient(server);
    const article = await createArticle(admin, { title: 'Talk about it', status: 'published' });
    const email = 'exporter@example.com';
    const { cookie } = await signInMember(server.url, server.dataDir, email, 'Ex Porter');
    const posted = await new TestClient(server.url).post(`/api/articles/${article.id}/comments`, {
      authorName: 'Ex Porter',
      authorEmail: 'Exporter@Example.com',
      content: 'My own words.',
    });
    expect(posted.status).toBe(201);
    const response = await memberClient(cookie).get('/api/members/me/export');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="my-account-\d{4}-\d{2}-\d{2}\.json"$/);
    const data = (await response.json()) as {
      account: Record<string, unknown>;
      comments: { content: string; articleUrl?: string }[];
      newsletter: { status: string };
    };
    expect(data.account).toMatchObject({ email, name: 'Ex Porter', newsletter: false });
    expect(Object.keys(data.account)).not.toContain('stripeCustomerId');
    expect(data.comments).toEqual([
      expect.objectContaining({ content: 'My own words.', articleUrl: expect.stringContaining(article.slug) }),
    ]);
    expect(data.newsletter).toEqual({ status: 'none' });
    await expectError(await new TestClient(server.url).get('/api/members/me/export'), 401);
  });

  it('signs out: the session is gone on the server, not only the cookie', async () => {
    const { cookie } = await signInMember(server.url, server.dataDir, 'leaver@example.com');
    const client = memberClient(cookie);
    const out = await client.post('/api/members/sign-out');
    expect(out.status).toBe(204);
    expect(client.cookies.has('member_session')).toBe(false);
    await expectError(await memberClient(cookie).get('/api/members/me'), 401);
    expect((await new TestClient(server.url).post('/api/members/sign-out')).status).toBe(204);
  });

  it('deletes the account with its sessions, newsletter subscription and comments', async () => {
    const admin = await adminClient(server);
    const article = await createArticle(admin, { title: 'A short-lived thread', status: 'published' });
    const email = 'deleter@example.com';
    await askForLink(email, { newsletter: true });
    const first = await new TestClient(server.url).get(await latestSignInLink(server.dataDir, email));
    expect(first.status).toBe(303);
    const { cookie } = await signInMember(server.url, server.dataDir, email);
    const otherSession = first.headers
      .getSetCookie()
      .find((c) => c.startsWith('member_session='))!
      .split(';')[0]!;
    for (const content of ['First thought.', 'Second thought.']) {
      await new TestClient(server.url).post(`/api/articles/${article.id}/comments`, { authorName: 'Del', authorEmail: email, content });
    }
    await new TestClient(server.url).post(`/api/articles/${article.id}/comments`, {
      authorName: 'Someone else',
      authorEmail: 'someone@example.com',
      content: `I replied to ${email}.`,
    });
    expect(await storedSubscriber(email)).toBeDefined();

    const deleted = await read(await memberClient(cookie).delete('/api/members/me'));
    expect(deleted).toEqual({ status: 200, body: { deleted: true, comments: 2 } });
    expect((await storedMembers()).some((m) => m.email === email)).toBe(false);
    expect(await storedSubscriber(email)).toBeUndefined();
    const thread = (await (await fetch(new URL(`/api/articles/${article.id}/comments`, server.url))).json()) as { content: string }[];
    expect(thread.map((c) => c.content)).toEqual([`I replied to ${email}.`]);
    for (const session of [cookie, otherSession]) await expectError(await memberClient(session).get('/api/members/me'), 401);
    await expectError(await new TestClient(server.url).delete('/api/members/me'), 401);
  });
});

/** Every route file under src/pages/api with the methods it exports, as `METHOD /api/path` (a parameter filled with a dummy). */
function apiRoutes(): { method: string; pathname: string; file: string }[] {
  const base = path.join(ROOT, 'src/pages');
  const routes: { method: string; pathname: string; file: string }[] = [];
  for (const name of fs.readdirSync(path.join(base, 'api'), { recursive: true, encoding: 'utf8' })) {
    if (!name.endsWith('.ts') || name.endsWith('.test.ts')) continue;
    const file = path.join(base, 'api', name);
    const pathname = `/api/${name}`
      .replace(/\.ts$/, '')
      .replace(/\/index$/, '')
      .replace(/\[\.\.\.[^\]]+\]/g, 'no-such-route')
      .replace(/\[[^\]]+\]/g, 'no-such-id');
    for (const [, method] of fs.readFileSync(file, 'utf8').matchAll(/^export const (GET|POST|PUT|PATCH|DELETE)\b/gm)) {
      routes.push({ method: method!, pathname, file: path.relative(ROOT, file) });
    }
  }
  return routes;
}

/** A member's own calls (and the ones that would end their session): answered for members, not tried here. */
const MEMBER_ROUTES = /^(?:GET|PATCH|DELETE|POST) \/api\/members\/(?:me|me\/export|sign-out|content\/[^/]+|checkout|portal)$/;

describe('members never reach staff', () => {
  it('every route a signed-out caller is refused (401) refuses a member too; no route gives a member more than a stranger', async () => {
    const { cookie } = await signInMember(server.url, server.dataDir, 'outsider@example.com', 'Out Sider');
    const token = cookie.split('=')[1]!;
    const ask = (method: string, pathname: string, asMember: boolean) => {
      const client = new TestClient(server.url);
      // The member's token in both cookies: neither its own cookie nor the staff one makes it staff.
      if (asMember) {
        client.cookies.set('member_session', token);
        client.cookies.set('session', token);
      }
      return client.request(method, pathname, method === 'GET' || method === 'DELETE' ? {} : { json: {} });
    };
    const staff: string[] = [];
    const routes = apiRoutes().filter(({ method, pathname }) => !MEMBER_ROUTES.test(`${method} ${pathname}`));
    for (const { method, pathname, file } of routes) {
      const stranger = await ask(method, pathname, false);
      const member = await ask(method, pathname, true);
      const where = `${method} ${pathname} (${file}): a stranger got ${stranger.status}, a member ${member.status}`;
      if (stranger.status === 401) {
        staff.push(`${method} ${pathname}`);
        expect(member.status, where).toBe(401);
      }
      if (stranger.status === 403) expect(member.status, where).toBe(403);
      if (stranger.status >= 400) expect(member.status, where).toBeGreaterThanOrEqual(400);
    }
    // The enumeration found the staff API (a broken walk would pass with nothing in it).
    expect(staff).toEqual(expect.arrayContaining(['GET /api/users', 'POST /api/articles', 'GET /api/audit', 'PUT /api/members/settings']));
    expect(staff.length).toBeGreaterThan(40);
    // The member is still signed in as a member after all that.
    expect((await memberClient(cookie).get('/api/members/me')).status).toBe(200);
  });

  it('the admin pages send a member to the staff sign-in, as they do a stranger', async () => {
    const { cookie } = await signInMember(server.url, server.dataDir, 'page-outsider@example.com');
    const pages = fs
      .readdirSync(path.join(ROOT, 'src/pages/admin'), { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.astro'))
      .map((name) =>
        `/admin/${name}`
          .replace(/\.astro$/, '')
          .replace(/\/index$/, '')
          .replace(/\[[^\]]+\]/g, 'no-such-id'),
      );
    expect(pages).toEqual(expect.arrayContaining(['/admin', '/admin/editor']));
    for (const page of pages) {
      const stranger = await new TestClient(server.url).get(page);
      const member = await memberClient(cookie).get(page);
      expect(stranger.status, page).toBe(302);
      expect(stranger.headers.get('location'), page).toMatch(/^\/login/);
      expect([member.status, member.headers.get('location')], page).toEqual([stranger.status, stranger.headers.get('location')]);
    }
  });
});

describe('members-only comments', () => {
  it('GET|PUT /api/members/settings: admins only, validated', async () => {
    const admin = await adminClient(server);
    expect(await read(await admin.get('/api/members/settings'))).toEqual({ status: 200, body: { commentsMembersOnly: false } });
    await expectError(await admin.put('/api/members/settings', { commentsMembersOnly: 'yes' }), 400);
    await expectError(await admin.put('/api/members/settings', { commentsMembersOnly: true, extra: 1 }), 400);
    await expectError(await new TestClient(server.url).get('/api/members/settings'), 401);
    const { cookie } = await signInMember(server.url, server.dataDir, 'settings-member@example.com');
    await expectError(await memberClient(cookie).put('/api/members/settings', { commentsMembersOnly: true }), 401);
    expect(await read(await new TestClient(server.url).get('/api/members/comment-policy'))).toEqual({
      status: 200,
      body: { membersOnly: false },
    });
  });

  it('when on: a stranger is refused (401), a member comments under their own name, whatever was typed', async () => {
    const admin = await adminClient(server);
    const article = await createArticle(admin, { title: 'Members talk here', status: 'published' });
    const comments = `/api/articles/${article.id}/comments`;
    const { cookie } = await signInMember(server.url, server.dataDir, 'commenter@example.com', 'Carla Commenter');
    // Off: anyone comments, and a member's comment carries the member's name all the same.
    const open = await read<{ authorName: string }>(
      await memberClient(cookie).post(comments, { authorName: 'Somebody Else', authorEmail: 'x@example.com', content: 'Open thread.' }),
    );
    expect(open).toMatchObject({ status: 201, body: { authorName: 'Carla Commenter' } });
    expect(
      (await new TestClient(server.url).post(comments, { authorName: 'Guest', authorEmail: 'g@example.com', content: 'Hi' })).status,
    ).toBe(201);

    expect((await admin.put('/api/members/settings', { commentsMembersOnly: true })).status).toBe(200);
    try {
      expect(await read(await new TestClient(server.url).get('/api/members/comment-policy'))).toEqual({
        status: 200,
        body: { membersOnly: true },
      });
      await expectError(
        await new TestClient(server.url).post(comments, { authorName: 'Guest', authorEmail: 'g@example.com', content: 'Let me in' }),
        401,
        /Only members can comment/,
      );
      const posted = await read<{ authorName: string }>(await memberClient(cookie).post(comments, { content: 'Members only now.' }));
      expect(posted).toMatchObject({ status: 201, body: { authorName: 'Carla Commenter' } });
      await expectError(await memberClient(cookie).post(comments, { content: '' }), 400);
      const stored = await read<{ authorName: string; authorEmail: string; content: string }[]>(await admin.get(comments));
      expect(stored.body.filter((c) => c.authorEmail === 'commenter@example.com').map((c) => c.authorName)).toEqual([
        'Carla Commenter',
        'Carla Commenter',
      ]);
      const nameless = await signInMember(server.url, server.dataDir, 'nameless@example.com');
      await expectError(await memberClient(nameless.cookie).post(comments, { content: 'Who am I?' }), 400, /Add your name/);
    } finally {
      await admin.put('/api/members/settings', { commentsMembersOnly: false });
    }
  });
});
