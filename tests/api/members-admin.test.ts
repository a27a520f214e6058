/**
 * The admin's Members API (issue 48) on the real server: members with known subscriptions written into the
 * store before it starts, then the role matrix of every members endpoint, the list's search, filters and
 * pages, a member's page, comps (status, history, audit log) and the day-by-day figures with their MRR.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, startServer, type TestServer } from '../helpers/server.ts';
import { storeOptionsFor } from '../helpers/postgres.ts';
import { openStore } from '../../src/store/index.ts';
import type { Member, MemberSubscription } from '../../src/schemas/member.ts';
import type { AdminMemberDetail, MemberListing, MemberStats } from '../../src/schemas/member-admin.ts';
import type { AuditEntry } from '../../src/schemas/audit.ts';
import type { PublicUser, Role } from '../../src/schemas/auth.ts';
import { adminClient, clearOfMidnight, expectError, read, TestClient } from './support.ts';

const DAY = 86_400_000;
let server: TestServer;
let admin: TestClient;
let adminId: string;
const clients = new Map<Role | 'anonymous', TestClient>();
/** Today (UTC, the server's BRIEFING_TZ) at seeding time, and the seeded members by name. */
let today: string;
const ids: Record<string, string> = {};

/** Noon UTC `back` days before today (never today itself: that noon may be ahead of the clock). */
function noon(back: number): string {
  return new Date(Date.parse(`${today}T12:00:00.000Z`) - back * DAY).toISOString();
}

function member(name: string, createdBack: number, change: Partial<Member> = {}): Member {
  const id = randomUUID();
  ids[name] = id;
  const createdAt = noon(createdBack);
  return {
    id,
    email: `${name}@example.com`,
    name: `${name[0]!.toUpperCase()}${name.slice(1)} Reader`,
    newsletter: false,
    createdAt,
    history: [{ at: createdAt, kind: 'signed-up', text: 'Signed up.' }],
    ...change,
  };
}

function subscription(startBack: number, change: Partial<MemberSubscription> = {}): MemberSubscription {
  return {
    id: `sub_${randomUUID().slice(0, 8)}`,
    status: 'active',
    interval: 'month',
    amount: 500,
    currency: 'usd',
    startedAt: noon(startBack),
    currentPeriodEnd: noon(startBack - 30),
    cancelAtPeriodEnd: false,
    syncedAt: noon(startBack),
    ...change,
  };
}

/** Members whose figures the stats test works out by hand (days back from today in brackets). */
function seededMembers(): Member[] {
  return [
    member('ada', 20, { name: 'Ada Lovelace' }),
    // Monthly 500 from day 10.
    member('ben', 12, {
      stripeCustomerId: 'cus_ben',
      subscription: subscription(10),
      history: [
        { at: noon(12), kind: 'signed-up', text: 'Signed up.' },
        { at: noon(10), kind: 'subscription-started', text: 'Started the monthly plan.', stripeEventId: 'evt_ben_started' },
        { at: noon(10), kind: 'payment-succeeded', text: 'Paid $5.00 for the monthly plan.', stripeEventId: 'evt_ben_paid' },
      ],
    }),
    // Monthly 700 since day 15, behind since day 2: past due, within the grace period.
    member('cy', 15, { subscription: subscription(15, { amount: 700, status: 'past_due', pastDueSince: noon(2) }) }),
    // Yearly 12000 (1000 a month) from day 5.
    member('dee', 6, { subscription: subscription(5, { interval: 'year', amount: 12_000 }) }),
    member('eve', 3),
    // Monthly 500 from day 8, cancelled at the period's end on day 4.
    member('fay', 8, {
      subscription: subscription(8, {
        status: 'canceled',
        cancelAtPeriodEnd: true,
        currentPeriodEnd: noon(4),
        endedAt: noon(4),
        syncedAt: noon(4),
      }),
    }),
    member('gus', 1, { name: 'Gus Parker' }),
    member('hal', 1, { name: 'Hal Parker' }),
  ];
}

async function signIn(role: Role): Promise<TestClient> {
  const username = `members-${role}`;
  expect((await admin.post('/api/users', { username, role, password: `${username}-password` })).status).toBe(201);
  const client = new TestClient(server.url);
  await client.login(username, `${username}-password`);
  return client;
}

async function listing(query = ''): Promise<MemberListing> {
  const { status, body } = await read<MemberListing>(await admin.get(`/api/members${query}`));
  expect(status, JSON.stringify(body)).toBe(200);
  return body;
}

async function detail(name: string): Promise<AdminMemberDetail> {
  const { status, body } = await read<AdminMemberDetail>(await admin.get(`/api/members/${ids[name]}`));
  expect(status, JSON.stringify(body)).toBe(200);
  return body;
}

const namesOf = (page: MemberListing) => page.items.map((m) => m.email.split('@')[0]);

beforeAll(async () => {
  await clearOfMidnight();
  today = new Date().toISOString().slice(0, 10);
  const dataDir = makeDataDir('meridian-members-admin-');
  const store = await openStore(dataDir, 'write', await storeOptionsFor(dataDir));
  try {
    for (const seeded of seededMembers()) expect(await store.members.insert(seeded)).toBe(true);
    await store.meta.set('members.plans', { currency: 'usd', monthly: 500, yearly: 5000, updatedAt: noon(30) });
  } finally {
    await store.close();
  }
  server = await startServer({ dataDir, env: { TRUST_PROXY: 'true', BRIEFING_TZ: 'UTC' } });
  admin = await adminClient(server);
  adminId = (await read<{ user: PublicUser }>(await admin.get('/api/auth/me'))).body.user.id;
  clients.set('admin', admin);
  clients.set('anonymous', new TestClient(server.url));
  for (const role of ['editor', 'author', 'contributor'] as const) clients.set(role, await signIn(role));
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

describe('who may do what', () => {
  const WHO = ['admin', 'editor', 'author', 'contributor', 'anonymous'] as const;
  const READ = [200, 200, 403, 403, 401];
  const CHANGE = [200, 403, 403, 403, 401];
  it.each([
    { method: 'GET', label: '/api/members', path: () => '/api/members', expected: READ },
    { method: 'GET', label: '/api/members/{id}', path: () => `/api/members/${ids.ada}`, expected: READ },
    { method: 'GET', label: '/api/members/stats', path: () => '/api/members/stats', expected: READ },
    { method: 'POST', label: '/api/members/{id}/comp', path: () => `/api/members/${ids.hal}/comp`, expected: CHANGE },
    { method: 'DELETE', label: '/api/members/{id}/comp', path: () => `/api/members/${ids.hal}/comp`, expected: CHANGE },
  ])('$method $label', async ({ method, path, expected }) => {
    for (const [i, who] of WHO.entries()) {
      const response = await clients.get(who)!.request(method, path(), method === 'POST' ? { json: {} } : {});
      if (expected[i] === 200) expect(response.status, `${who}: ${await response.clone().text()}`).toBe(200);
      else await expectError(response, expected[i]!, expected[i] === 403 ? new RegExp(`^Your role \\(${who}\\) cannot`) : undefined);
    }
  });
});

describe('the list', () => {
  it('lists every member newest first with the counts by status, and nothing internal', async () => {
    const page = await listing();
    expect(page.total).toBe(8);
    expect(page.counts).toEqual({ free: 5, paid: 2, 'past-due': 1, comped: 0 });
    // gus and hal signed up together: their order is the store's tie-break.
    expect(namesOf(page).slice(0, 2).sort()).toEqual(['gus', 'hal']);
    expect(namesOf(page).slice(2)).toEqual(['eve', 'dee', 'fay', 'ben', 'cy', 'ada']);
    const ben = page.items.find((m) => m.id === ids.ben)!;
    expect(ben).toMatchObject({ status: 'paid', subscription: { status: 'active', interval: 'month', amount: 500, currency: 'usd' } });
    expect(page.items.find((m) => m.id === ids.cy)!.status).toBe('past-due');
    const text = JSON.stringify(page);
    for (const internal of ['history', 'cus_', 'sub_', 'evt_', 'syncedAt', 'stripeEventId']) expect(text, internal).not.toContain(internal);
  });

  it('searches e-mail and name whatever the case, filters by status, and pages', async () => {
    expect(namesOf(await listing('?q=ADA%40'))).toEqual(['ada']);
    expect(namesOf(await listing('?q=lovelace'))).toEqual(['ada']);
    expect(namesOf(await listing('?q=parker')).sort()).toEqual(['gus', 'hal']);
    expect(namesOf(await listing('?status=past-due'))).toEqual(['cy']);
    expect(namesOf(await listing('?status=paid')).sort()).toEqual(['ben', 'dee']);
    expect(namesOf(await listing('?status=free&q=parker')).sort()).toEqual(['gus', 'hal']);
    expect((await listing('?status=paid&q=parker')).items).toEqual([]);
    const third = await listing('?pageSize=3&page=3');
    expect(third).toMatchObject({ total: 8, page: 3, pageSize: 3 });
    expect(namesOf(third)).toEqual(['cy', 'ada']);
    // The counts are the whole list's, whatever the search.
    expect((await listing('?q=parker')).counts.paid).toBe(2);
    await expectError(await admin.get('/api/members?status=vip'), 400, /status/);
    await expectError(await admin.get('/api/members?pageSize=0'), 400);
  });

  it("answers a member's page: subscription, Stripe customer and history newest first, without event ids", async () => {
    const ben = await detail('ben');
    expect(ben).toMatchObject({
      id: ids.ben,
      email: 'ben@example.com',
      status: 'paid',
      stripeCustomerId: 'cus_ben',
      subscription: { status: 'active', amount: 500, startedAt: noon(10) },
    });
    expect(ben.subscription).not.toHaveProperty('id');
    expect(ben.subscription).not.toHaveProperty('syncedAt');
    expect(ben.history.map((line) => line.kind)).toEqual(['payment-succeeded', 'subscription-started', 'signed-up']);
    expect(JSON.stringify(ben)).not.toContain('evt_');
    await expectError(await admin.get(`/api/members/${randomUUID()}`), 404, /Member not found/);
  });
});

describe('comps', () => {
  it('makes a free member comped (paid level), writes the history and the audit log, and removing it reverts', async () => {
    expect((await detail('eve')).status).toBe('free');
    const granted = await read<AdminMemberDetail>(await admin.post(`/api/members/${ids.eve}/comp`, {}));
    expect(granted.status, JSON.stringify(granted.body)).toBe(200);
    expect(granted.body.status).toBe('comped');
    expect(granted.body.comp).toEqual({ at: expect.any(String), by: adminId });
    expect(granted.body.history[0]).toMatchObject({
      kind: 'comp-granted',
      by: adminId,
      text: expect.stringContaining('without an end date'),
    });
    expect(namesOf(await listing('?status=comped'))).toEqual(['eve']);
    expect((await listing()).counts).toEqual({ free: 4, paid: 2, 'past-due': 1, comped: 1 });

    const removed = await read<AdminMemberDetail>(await admin.delete(`/api/members/${ids.eve}/comp`));
    expect(removed.status).toBe(200);
    expect(removed.body.status).toBe('free');
    expect(removed.body).not.toHaveProperty('comp');
    expect(removed.body.history.slice(0, 2).map((line) => [line.kind, line.by])).toEqual([
      ['comp-removed', adminId],
      ['comp-granted', adminId],
    ]);
    // Nothing left to remove: refused, and no history line written.
    await expectError(await admin.delete(`/api/members/${ids.eve}/comp`), 409, /no comped subscription/);
    expect((await detail('eve')).history).toHaveLength(3);

    const audit = await read<{ items: AuditEntry[] }>(await admin.get('/api/audit?pageSize=5'));
    const entries = audit.body.items.filter((entry) => entry.target.id === ids.eve);
    expect(entries.map((entry) => entry.action)).toEqual(['member.comp-remove', 'member.comp-grant']);
    expect(entries[1]).toMatchObject({ actor: { id: adminId, username: 'admin' }, target: { type: 'member', label: 'e***@example.com' } });
    expect(JSON.stringify(audit.body)).not.toContain('eve@example.com');
  });

  it('comps until a date, which must be in the future, and refuses other input', async () => {
    const until = new Date(Date.now() + 10 * DAY).toISOString();
    const granted = await read<AdminMemberDetail>(await admin.post(`/api/members/${ids.gus}/comp`, { until }));
    expect(granted.status, JSON.stringify(granted.body)).toBe(200);
    expect(granted.body).toMatchObject({ status: 'comped', comp: { until } });
    expect(granted.body.history[0]!.text).toContain(`until ${until.slice(0, 10)}`);
    await expectError(await admin.post(`/api/members/${ids.hal}/comp`, { until: noon(1) }), 400, /future/);
    await expectError(await admin.post(`/api/members/${ids.hal}/comp`, { until: 'next week' }), 400);
    await expectError(await admin.post(`/api/members/${ids.hal}/comp`, { until, forever: true }), 400);
    await expectError(await admin.post(`/api/members/${randomUUID()}/comp`, {}), 404);
    expect((await detail('hal')).status).toBe('free');
    expect((await admin.delete(`/api/members/${ids.gus}/comp`)).status).toBe(200);
  });
});

describe('the figures', () => {
  it('answers members, paying and comped members and MRR per day, as each day stood at its end', async () => {
    const from = new Date(Date.parse(today) - 12 * DAY).toISOString().slice(0, 10);
    const { status, body } = await read<MemberStats>(await admin.get(`/api/members/stats?from=${from}&to=${today}`));
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ timeZone: 'UTC', from, to: today, currency: 'usd', otherCurrency: 0 });
    expect(body.days).toHaveLength(13);
    // From 12 days back to today: ben pays from day 10, fay from 8 to 4, dee (a twelfth of 12000) from 5; cy all along, past due lately.
    expect(body.days.map((d) => d.members)).toEqual([3, 3, 3, 3, 4, 4, 5, 5, 5, 6, 6, 8, 8]);
    expect(body.days.map((d) => d.paying)).toEqual([1, 1, 2, 2, 3, 3, 3, 4, 3, 3, 3, 3, 3]);
    expect(body.days.map((d) => d.mrr)).toEqual([700, 700, 1200, 1200, 1700, 1700, 1700, 2700, 2200, 2200, 2200, 2200, 2200]);
    // Comps granted and removed above show today only while they last: none is left.
    expect(body.days.map((d) => d.comped)).toEqual(new Array(13).fill(0));
  });

  it('counts a comp as comped, never as paying or revenue', async () => {
    expect((await admin.post(`/api/members/${ids.hal}/comp`, {})).status).toBe(200);
    const { body } = await read<MemberStats>(await admin.get('/api/members/stats'));
    expect(body.days).toHaveLength(30);
    expect(body.days.at(-1)).toEqual({ day: today, members: 8, paying: 3, comped: 1, mrr: 2200 });
    expect((await admin.delete(`/api/members/${ids.hal}/comp`)).status).toBe(200);
  });

  it('takes the analytics range and refuses a reversed or too long one', async () => {
    await expectError(await admin.get(`/api/members/stats?from=${today}&to=2020-01-01`), 400, /from must not be after to/);
    await expectError(await admin.get('/api/members/stats?from=2020-01-01&to=2026-01-01'), 400, /more than 731 days/);
    await expectError(await admin.get('/api/members/stats?from=yesterday'), 400);
  });
});
