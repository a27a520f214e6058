/**
 * Roles (issue 14): the matrix of role x endpoint -> status, generated from one table, over every /api
 * call that needs a session; then ownership, the Users API, disabling, the last admin and the audit log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import type { Article } from '../../src/schemas/article.ts';
import type { PublicUser, Role, UserSummary } from '../../src/schemas/auth.ts';
import type { AuditEntry } from '../../src/schemas/audit.ts';
import { adminClient, createArticle, expectError, read, startApiServer, TestClient } from './support.ts';

const ROLES: Role[] = ['admin', 'editor', 'author', 'contributor'];
type Who = Role | 'anonymous';
const WHO: Who[] = [...ROLES, 'anonymous'];

let server: TestServer;
let admin: TestClient;
const clients = new Map<Who, TestClient>();
const userIds = new Map<Role, string>();
let published: Article;
let adminDraft: Article;
let sourceId: string;
let commentId: string;
let seq = 0;

async function signIn(username: string, password: string): Promise<TestClient> {
  const client = new TestClient(server.url);
  await client.login(username, password);
  return client;
}

/** What the tests read back: a created record's id, a user as the API answers it, a page of the audit log. */
type Created = { id: string };
type UserAnswer = { user: UserSummary; password?: string };
type AuditPage = { items: AuditEntry[]; total: number };

/** Adds a user through the API as the admin; answers its id. */
async function addUser(username: string, role: Role, password = `${username}-password`): Promise<string> {
  const { status, body } = await read<UserAnswer>(await admin.post('/api/users', { username, role, password }));
  expect(status, JSON.stringify(body)).toBe(201);
  return body.user.id as string;
}

beforeAll(async () => {
  server = await startApiServer();
  admin = await adminClient(server);
  clients.set('admin', admin);
  clients.set('anonymous', new TestClient(server.url));
  for (const role of ROLES.slice(1)) {
    userIds.set(role, await addUser(`the-${role}`, role));
    clients.set(role, await signIn(`the-${role}`, `the-${role}-password`));
  }
  published = await createArticle(admin, { title: 'Published by the admin', status: 'published' });
  adminDraft = await createArticle(admin, { title: 'Draft of the admin' });
  const source = await read<Created>(
    await admin.post('/api/news-sources', { name: 'Matrix feed', url: 'https://feeds.example.org/rss', section: 'world' }),
  );
  sourceId = source.body.id;
  const comment = await read<Created>(
    await new TestClient(server.url).post(`/api/articles/${published.id}/comments`, {
      authorName: 'Reader',
      authorEmail: 'r@example.org',
      content: 'A comment',
    }),
  );
  expect(comment.status, JSON.stringify(comment.body)).toBe(201);
  commentId = comment.body.id;
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

/** What a row's path or body may depend on: the caller's own fresh draft, or fresh records to delete. */
type Fixtures = {
  own(): Promise<string>;
  fresh(): Promise<string>;
  trashed(): Promise<string>;
  freshComment(): Promise<string>;
  freshSource(): Promise<string>;
  freshUser(): Promise<string>;
};

function fixturesFor(who: Who): Fixtures {
  const client = who === 'anonymous' ? admin : clients.get(who)!;
  return {
    own: async () => (await createArticle(client, { title: `Own draft ${++seq}` })).id,
    fresh: async () => (await createArticle(admin, { title: `Fresh published ${++seq}`, status: 'published' })).id,
    trashed: async () => {
      const { id } = await createArticle(admin, { title: `Trashed ${++seq}`, status: 'published' });
      expect((await admin.delete(`/api/articles/${id}`)).status).toBe(204);
      return id;
    },
    freshComment: async () => {
      const { body } = await read<Created>(
        await new TestClient(server.url).post(`/api/articles/${published.id}/comments`, {
          authorName: 'R',
          authorEmail: 'r@example.org',
          content: `c ${++seq}`,
        }),
      );
      return body.id as string;
    },
    freshSource: async () =>
      (
        await read<Created>(
          await admin.post('/api/news-sources', { name: `S ${++seq}`, url: `https://feeds.example.org/${seq}`, section: 'world' }),
        )
      ).body.id,
    freshUser: async () => addUser(`temp-${++seq}`, 'contributor'),
  };
}

/** `allowed`: past the permission gate (neither 401 nor 403), whatever the call itself then answers. */
type Expected = number | 'allowed';
type Row = {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string | ((f: Fixtures) => Promise<string>);
  body?: unknown | (() => unknown);
  /** admin, editor, author, contributor, anonymous */
  expect: [Expected, Expected, Expected, Expected, Expected];
};

const ANY = 'allowed' as const;
const ADMIN_ONLY = (ok: Expected): Row['expect'] => [ok, 403, 403, 403, 401];
const EDITORS = (ok: Expected): Row['expect'] => [ok, ok, 403, 403, 401];
const SIGNED_IN = (ok: Expected): Row['expect'] => [ok, ok, ok, ok, 401];

/** THE TABLE: every /api endpoint that needs a session. */
const MATRIX: Row[] = [
  { method: 'GET', path: '/api/auth/me', expect: SIGNED_IN(200) },
  { method: 'GET', path: '/api/articles/stats', expect: EDITORS(200) },
  // Analytics (issue 33): site-wide figures for editors; top, sparklines and one article's figures also for authors (their own only).
  { method: 'GET', path: '/api/analytics/summary', expect: EDITORS(200) },
  { method: 'GET', path: '/api/analytics/referrers', expect: EDITORS(200) },
  { method: 'GET', path: '/api/analytics/top?period=7d', expect: [200, 200, 200, 403, 401] },
  { method: 'GET', path: async () => `/api/analytics/sparklines?ids=${published.id}`, expect: [200, 200, 200, 403, 401] },
  { method: 'GET', path: async () => `/api/analytics/articles/${published.id}`, expect: EDITORS(200) },
  { method: 'POST', path: '/api/articles', body: { title: 'A new draft' }, expect: SIGNED_IN(201) },
  { method: 'POST', path: '/api/articles', body: { title: 'Straight to print', status: 'published' }, expect: [201, 201, 201, 403, 401] },
  {
    method: 'POST',
    path: '/api/articles',
    body: () => ({ title: 'Later', status: 'scheduled', scheduledFor: new Date(Date.now() + 86_400_000).toISOString() }),
    expect: [201, 201, 201, 403, 401],
  },
  { method: 'PUT', path: async (f) => `/api/articles/${await f.own()}`, body: { title: 'Own draft, edited' }, expect: SIGNED_IN(200) },
  { method: 'PUT', path: async (f) => `/api/articles/${await f.own()}`, body: { status: 'published' }, expect: [200, 200, 200, 403, 401] },
  { method: 'PUT', path: async () => `/api/articles/${published.id}`, body: { title: 'Published by the admin' }, expect: EDITORS(200) },
  {
    method: 'PUT',
    path: async () => `/api/articles/${adminDraft.id}`,
    body: { title: 'Draft of the admin' },
    expect: [200, 200, 404, 404, 401],
  },
  { method: 'DELETE', path: async (f) => `/api/articles/${await f.own()}`, expect: SIGNED_IN(204) },
  { method: 'DELETE', path: async (f) => `/api/articles/${await f.fresh()}`, expect: EDITORS(204) },
  { method: 'POST', path: async () => `/api/admin/articles/${published.id}/adjust-likes`, body: { amount: 1 }, expect: EDITORS(200) },
  { method: 'POST', path: async () => `/api/admin/articles/${published.id}/adjust-dislikes`, body: { amount: 1 }, expect: EDITORS(200) },
  { method: 'GET', path: '/api/admin/comments', expect: EDITORS(200) },
  { method: 'GET', path: '/api/admin/comments/count', expect: EDITORS(200) },
  { method: 'PUT', path: async () => `/api/comments/${commentId}/status`, body: { status: 'hidden' }, expect: EDITORS(200) },
  { method: 'DELETE', path: async (f) => `/api/comments/${await f.freshComment()}`, expect: EDITORS(204) },
  { method: 'POST', path: '/api/images/upload-url', expect: SIGNED_IN(ANY) },
  { method: 'POST', path: '/api/images/normalize', body: {}, expect: SIGNED_IN(400) },
  { method: 'GET', path: '/api/news-sources', expect: ADMIN_ONLY(200) },
  {
    method: 'POST',
    path: '/api/news-sources',
    body: () => ({ name: `Feed ${++seq}`, url: `https://feeds.example.org/new-${seq}`, section: 'world' }),
    expect: ADMIN_ONLY(201),
  },
  { method: 'PUT', path: async () => `/api/news-sources/${sourceId}`, body: { enabled: false }, expect: ADMIN_ONLY(200) },
  { method: 'DELETE', path: async (f) => `/api/news-sources/${await f.freshSource()}`, expect: ADMIN_ONLY(204) },
  { method: 'POST', path: async () => `/api/news-sources/${sourceId}/fetch`, expect: ADMIN_ONLY(ANY) },
  { method: 'GET', path: '/api/newsletter/subscribers', expect: ADMIN_ONLY(200) },
  { method: 'GET', path: '/api/newsletter/subscribers/export', expect: ADMIN_ONLY(200) },
  { method: 'DELETE', path: '/api/newsletter/subscribers/00000000-0000-4000-8000-000000000000', expect: ADMIN_ONLY(404) },
  { method: 'GET', path: '/api/newsletter/briefing/preview', expect: ADMIN_ONLY(ANY) },
  { method: 'POST', path: '/api/newsletter/briefing/test', body: { email: 'not-an-address' }, expect: ADMIN_ONLY(400) },
  { method: 'GET', path: '/api/users', expect: ADMIN_ONLY(200) },
  { method: 'POST', path: '/api/users', body: () => ({ username: `new-${++seq}`, role: 'author' }), expect: ADMIN_ONLY(201) },
  { method: 'PUT', path: async (f) => `/api/users/${await f.freshUser()}`, body: { role: 'author' }, expect: ADMIN_ONLY(200) },
  { method: 'DELETE', path: async (f) => `/api/users/${await f.freshUser()}`, expect: ADMIN_ONLY(204) },
  { method: 'GET', path: '/api/audit', expect: ADMIN_ONLY(200) },
  { method: 'GET', path: async (f) => `/api/articles/${await f.own()}/revisions`, expect: SIGNED_IN(200) },
  { method: 'GET', path: async () => `/api/articles/${published.id}/revisions`, expect: EDITORS(200) },
  { method: 'GET', path: async (f) => `/api/articles/${await f.own()}/revisions/1`, expect: SIGNED_IN(200) },
  { method: 'POST', path: async (f) => `/api/articles/${await f.own()}/revisions/1/restore`, expect: SIGNED_IN(200) },
  { method: 'POST', path: async () => `/api/articles/${adminDraft.id}/revisions/1/restore`, expect: [200, 200, 404, 404, 401] },
  {
    method: 'POST',
    path: async () => `/api/articles/${published.id}/corrections`,
    body: () => ({ text: `Correction ${++seq}` }),
    expect: EDITORS(201),
  },
  // The dashboard's Publishing panel (issue 33): the queue and Retry for editors.
  { method: 'GET', path: '/api/publishing', expect: EDITORS(200) },
  { method: 'POST', path: '/api/publishing/retry', body: { id: '987654321' }, expect: EDITORS(404) },
  // Tag curation (issue 35): editors merge and hide tags.
  { method: 'GET', path: '/api/tags', expect: EDITORS(200) },
  { method: 'PUT', path: '/api/tags/no-such-tag', body: { hidden: true }, expect: EDITORS(404) },
  { method: 'POST', path: '/api/tags/merge', body: { from: 'no-such-tag', into: 'no-other-tag' }, expect: EDITORS(404) },
  { method: 'GET', path: '/api/trash', expect: EDITORS(200) },
  { method: 'POST', path: async (f) => `/api/trash/${await f.trashed()}/restore`, expect: EDITORS(200) },
  { method: 'DELETE', path: async (f) => `/api/trash/${await f.trashed()}`, expect: EDITORS(204) },
  // Members (issue 48): editors read the list, a member's page and the figures; only admins comp (members-admin.test.ts: real ones).
  { method: 'GET', path: '/api/members', expect: EDITORS(200) },
  { method: 'GET', path: '/api/members/stats', expect: EDITORS(200) },
  { method: 'GET', path: '/api/members/00000000-0000-4000-8000-000000000000', expect: EDITORS(404) },
  { method: 'POST', path: '/api/members/00000000-0000-4000-8000-000000000000/comp', body: {}, expect: ADMIN_ONLY(404) },
  { method: 'DELETE', path: '/api/members/00000000-0000-4000-8000-000000000000/comp', expect: ADMIN_ONLY(404) },
];

const cases = MATRIX.flatMap((row, index) =>
  WHO.map((who, column) => ({
    row,
    who,
    expected: row.expect[column]!,
    name: `${row.method} ${typeof row.path === 'string' ? row.path : `#${index} ${row.path.toString().match(/\/api\/[^`$]*/)?.[0] ?? ''}`} as ${who} -> ${row.expect[column]}`,
  })),
);

describe('role x endpoint matrix', () => {
  it.each(cases)('$name', async ({ row, who, expected }) => {
    const fixtures = fixturesFor(who);
    const pathname = typeof row.path === 'string' ? row.path : await row.path(fixtures);
    const body = typeof row.body === 'function' ? (row.body as () => unknown)() : row.body;
    const client = clients.get(who)!;
    const response = await client.request(row.method, pathname, body === undefined ? {} : { json: body });
    if (expected === 'allowed') {
      expect([401, 403], await response.clone().text()).not.toContain(response.status);
      await response.body?.cancel();
    } else if (expected === 401 || expected === 403) {
      const error = await expectError(response, expected);
      if (expected === 403) expect(error.error).toMatch(new RegExp(`^Your role \\(${who}\\) cannot `));
    } else {
      expect(response.status, `${await response.clone().text()}`).toBe(expected);
      await response.body?.cancel();
    }
  });
});

describe('ownership', () => {
  it('lists only their own articles to authors and contributors, everything to editors', async () => {
    const authorOwn = await createArticle(clients.get('author')!, { title: 'Only the author sees this draft' });
    expect(authorOwn.createdBy).toBe(userIds.get('author'));
    const titlesFor = async (who: Role) =>
      ((await read<Article[]>(await clients.get(who)!.get('/api/articles?pageSize=100'))).body ?? []).map((a) => a.title);
    expect(await titlesFor('author')).toContain(authorOwn.title);
    expect(await titlesFor('author')).not.toContain(adminDraft.title);
    expect(await titlesFor('contributor')).not.toContain(authorOwn.title);
    expect(await titlesFor('editor')).toEqual(expect.arrayContaining([authorOwn.title, adminDraft.title]));
    const publishedFor = async (who: Role) =>
      ((await read<Article[]>(await clients.get(who)!.get('/api/articles?status=published&pageSize=100'))).body ?? []).map((a) => a.title);
    expect(await publishedFor('contributor')).toContain(published.title);
    expect(await titlesFor('contributor')).not.toContain(published.title);
    await expectError(await clients.get('contributor')!.get(`/api/articles/${authorOwn.id}`), 404);
    await expectError(await clients.get('contributor')!.put(`/api/articles/${authorOwn.id}`, { title: 'Hijacked' }), 404);
  });

  it("shows hidden comments and commenters' addresses only to roles that moderate", async () => {
    const emailsSeenBy = async (who: Who) =>
      JSON.stringify((await read(await clients.get(who)!.get(`/api/articles/${published.id}/comments`))).body);
    expect(await emailsSeenBy('editor')).toMatch(/r@example\.org/);
    for (const who of ['author', 'contributor', 'anonymous'] as const) expect(await emailsSeenBy(who), who).not.toMatch(/@example\.org/);
  });

  it('locks a contributor out of their draft once an editor published it', async () => {
    const contributor = clients.get('contributor')!;
    const draft = await createArticle(contributor, { title: 'Submitted by the contributor' });
    expect((await clients.get('editor')!.put(`/api/articles/${draft.id}`, { status: 'published' })).status).toBe(200);
    await expectError(
      await contributor.put(`/api/articles/${draft.id}`, { title: 'Changed after publication' }),
      403,
      /cannot edit this article/,
    );
    await expectError(await contributor.delete(`/api/articles/${draft.id}`), 403, /cannot delete this article/);
  });
});

describe('users', () => {
  it('answers a generated password once when none is given, and the new user signs in with it', async () => {
    const { status, body } = await read<UserAnswer & { password: string }>(
      await admin.post('/api/users', { username: 'generated-pw', role: 'editor' }),
    );
    expect(status).toBe(201);
    expect(body.user).toEqual({
      id: expect.any(String),
      username: 'generated-pw',
      role: 'editor',
      disabled: false,
      createdAt: expect.any(String),
    });
    expect(body.password).toMatch(/^[a-z2-7]{5}(-[a-z2-7]{5}){3}$/);
    const editor = await signIn('generated-pw', body.password);
    expect((await read<{ user: PublicUser }>(await editor.get('/api/auth/me'))).body.user.role).toBe('editor');
    const list = await read(await admin.get('/api/users'));
    expect(JSON.stringify(list.body)).not.toMatch(/passwordHash|argon2/);
    await expectError(await admin.post('/api/users', { username: 'generated-pw', role: 'author' }), 409, /already exists/);
    await expectError(await admin.post('/api/users', { username: 'x', role: 'overlord' }), 400);
  });

  it("ends a disabled user's sessions at once, refuses their sign-in, and lets them back when re-enabled", async () => {
    const id = await addUser('to-disable', 'author');
    const victim = await signIn('to-disable', 'to-disable-password');
    expect((await victim.get('/api/auth/me')).status).toBe(200);
    expect((await read<UserAnswer>(await admin.put(`/api/users/${id}`, { disabled: true }))).body.user.disabled).toBe(true);
    await expectError(await victim.get('/api/auth/me'), 401);
    await expectError(await victim.post('/api/articles', { title: 'Still here?' }), 401);
    await expectError(
      await new TestClient(server.url).post('/api/auth/login', { username: 'to-disable', password: 'to-disable-password' }),
      403,
      /disabled/,
    );
    await expectError(
      await new TestClient(server.url).post('/api/auth/login', { username: 'to-disable', password: 'wrong-password' }),
      401,
    );
    expect((await admin.put(`/api/users/${id}`, { disabled: false })).status).toBe(200);
    expect((await signIn('to-disable', 'to-disable-password').then((c) => c.get('/api/auth/me'))).status).toBe(200);
  });

  it('applies a role change on the next request, and resets a password (signing the user out)', async () => {
    const id = await addUser('promoted', 'contributor');
    const user = await signIn('promoted', 'promoted-password');
    await expectError(await user.get('/api/articles/stats'), 403);
    await admin.put(`/api/users/${id}`, { role: 'editor' });
    expect((await user.get('/api/articles/stats')).status).toBe(200);
    const reset = await read<{ password: string }>(await admin.put(`/api/users/${id}`, { resetPassword: true }));
    expect(reset.body.password).toMatch(/^[a-z2-7-]{23}$/);
    await expectError(await user.get('/api/auth/me'), 401);
    expect((await signIn('promoted', reset.body.password).then((c) => c.get('/api/auth/me'))).status).toBe(200);
  });

  it('never disables, demotes or deletes the last active admin', async () => {
    const me = (await read<{ user: PublicUser }>(await admin.get('/api/auth/me'))).body.user.id as string;
    await expectError(await admin.put(`/api/users/${me}`, { role: 'editor' }), 409, /last active admin/);
    await expectError(await admin.put(`/api/users/${me}`, { disabled: true }), 409, /last active admin/);
    const second = await addUser('second-admin', 'admin');
    const other = await signIn('second-admin', 'second-admin-password');
    await expectError(await admin.delete(`/api/users/${me}`), 409, /own account/);
    // With a second active admin, the first may be demoted; then the second is the last one.
    expect((await other.put(`/api/users/${me}`, { role: 'editor' })).status).toBe(200);
    await expectError(await other.put(`/api/users/${second}`, { disabled: true }), 409, /last active admin/);
    expect((await other.put(`/api/users/${me}`, { role: 'admin' })).status).toBe(200);
    await expectError(await admin.put('/api/users/00000000-0000-4000-8000-000000000000', { role: 'author' }), 404);
    await expectError(await admin.put(`/api/users/${second}`, {}), 400, /Nothing to change/);
  });
});

describe('audit log', () => {
  it('records publish, unpublish, delete, role changes, hidden comments and sources, newest first and paged', async () => {
    const article = await createArticle(clients.get('editor')!, { title: 'Audited story' });
    const editor = clients.get('editor')!;
    await editor.put(`/api/articles/${article.id}`, { status: 'published' });
    await editor.put(`/api/articles/${article.id}`, { status: 'archived' });
    await editor.delete(`/api/articles/${article.id}`);
    const { body } = await read<AuditPage>(await admin.get('/api/audit?pageSize=3'));
    expect(body.total).toBeGreaterThanOrEqual(3);
    expect(body.items.map((e: { action: string }) => e.action)).toEqual(['article.delete', 'article.unpublish', 'article.publish']);
    expect(body.items[0]).toMatchObject({
      actor: { username: 'the-editor' },
      target: { type: 'article', id: article.id, label: 'Audited story' },
      at: expect.any(String),
    });
    const page2 = await read<AuditPage>(await admin.get('/api/audit?pageSize=3&page=2'));
    expect(page2.body.items).toHaveLength(3);
    expect(page2.body.items[0].at <= body.items[2].at).toBe(true);

    const all: { action: string }[] = [];
    for (let page = 1; all.length < body.total; page++)
      all.push(...(await read<AuditPage>(await admin.get(`/api/audit?pageSize=50&page=${page}`))).body.items);
    expect(all).toHaveLength(body.total);
    const actions = new Set(all.map((e) => e.action));
    for (const action of [
      'user.create',
      'user.role',
      'user.disable',
      'user.enable',
      'user.password-reset',
      'user.delete',
      'comment.hide',
      'comment.delete',
      'source.add',
      'source.remove',
    ]) {
      expect(actions, action).toContain(action);
    }
    await expectError(await admin.get('/api/audit?pageSize=0'), 400);
  });
});
