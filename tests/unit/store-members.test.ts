/** The member repository (issue 48) on both stores: unique e-mails, lookups, one-step changes, the admin's filters. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.ts';
import type { Member } from '../../src/schemas/member.ts';
import { closeQuietly, makeTempDir } from './support.ts';
import { databaseFor } from '../helpers/postgres.ts';
import { readCollectionDocument } from '../../src/store/lowdb/inspect.ts';

const NOW = Date.parse('2031-05-10T12:00:00Z');
const DAY = 86_400_000;

function member(id: string, change: Partial<Member> = {}): Member {
  return {
    id,
    email: `${id}@example.com`,
    name: `Reader ${id}`,
    newsletter: false,
    createdAt: new Date(NOW - 10 * DAY).toISOString(),
    history: [{ at: new Date(NOW - 10 * DAY).toISOString(), kind: 'signed-up', text: 'Signed up' }],
    ...change,
  };
}

function subscription(change: Partial<NonNullable<Member['subscription']>> = {}): NonNullable<Member['subscription']> {
  return {
    id: 'sub_1',
    status: 'active',
    interval: 'month',
    amount: 500,
    currency: 'usd',
    startedAt: new Date(NOW - 5 * DAY).toISOString(),
    currentPeriodEnd: new Date(NOW + 25 * DAY).toISOString(),
    cancelAtPeriodEnd: false,
    syncedAt: new Date(NOW - 5 * DAY).toISOString(),
    ...change,
  };
}

let store: Store;
let dir: string;

afterEach(async () => {
  await closeQuietly(store);
});

describe.each(['lowdb', 'pg'] as const)('%s store: members', (kind) => {
  const open = async () => openStore(dir, 'write', { databaseUrl: kind === 'pg' ? await databaseFor(dir) : undefined });

  beforeEach(async () => {
    dir = makeTempDir();
    store = await open();
  });

  it('inserts once per e-mail and finds a member by id, e-mail and Stripe customer, as a copy', async () => {
    expect(await store.members.insert(member('m1'))).toBe(true);
    expect(await store.members.insert(member('m2', { email: 'm1@example.com' }))).toBe(false);
    expect(await store.members.insert(member('m1', { email: 'other@example.com' }))).toBe(false);
    expect(await store.members.count()).toBe(1);
    const found = (await store.members.getByEmail('M1@Example.com'))!;
    expect(found.id).toBe('m1');
    found.history.push({ at: 'x', kind: 'signed-in', text: 'changed outside' });
    expect((await store.members.get('m1'))!.history).toHaveLength(1);
    expect(await store.members.getByStripeCustomer('cus_1')).toBeUndefined();
    await store.members.mutate('m1', (m) => ({ ...m, stripeCustomerId: 'cus_1' }));
    expect((await store.members.getByStripeCustomer('cus_1'))!.id).toBe('m1');
  });

  it('applies concurrent changes of one member one after the other, and an undefined change writes nothing', async () => {
    await store.members.insert(member('m1'));
    const event = (n: number) => ({
      at: new Date(NOW + n).toISOString(),
      kind: 'payment-succeeded' as const,
      text: `Paid ${n}`,
      stripeEventId: `evt_${n % 5}`,
    });
    // Ten webhooks for five events, all at once: each event lands once.
    await Promise.all(
      Array.from({ length: 10 }, (_, n) =>
        store.members.mutate('m1', (m) =>
          m.history.some((h) => h.stripeEventId === `evt_${n % 5}`) ? undefined : { ...m, history: [...m.history, event(n)] },
        ),
      ),
    );
    const stored = (await store.members.get('m1'))!;
    expect(
      stored.history
        .map((h) => h.stripeEventId)
        .filter(Boolean)
        .sort(),
    ).toEqual(['evt_0', 'evt_1', 'evt_2', 'evt_3', 'evt_4']);
    expect(await store.members.mutate('missing', (m) => m)).toBeUndefined();
    expect(await store.members.mutate('m1', () => undefined)).toEqual(stored);
  });

  it('lists newest first with search over e-mail and name, and filters by the status at a given time', async () => {
    await store.members.insert(member('free', { createdAt: new Date(NOW - 3 * DAY).toISOString() }));
    await store.members.insert(
      member('paid', { name: 'Ada Lovelace', createdAt: new Date(NOW - 2 * DAY).toISOString(), subscription: subscription() }),
    );
    await store.members.insert(
      member('late', {
        createdAt: new Date(NOW - 1 * DAY).toISOString(),
        subscription: subscription({ id: 'sub_2', status: 'past_due', pastDueSince: new Date(NOW - 2 * DAY).toISOString() }),
      }),
    );
    await store.members.insert(
      member('comp', { createdAt: new Date(NOW).toISOString(), comp: { at: new Date(NOW).toISOString(), by: 'u1' } }),
    );
    const page = { offset: 0, limit: 10 };
    expect((await store.members.list({}, page, NOW)).items.map((m) => m.id)).toEqual(['comp', 'late', 'paid', 'free']);
    expect((await store.members.list({}, { offset: 1, limit: 2 }, NOW)).items.map((m) => m.id)).toEqual(['late', 'paid']);
    expect((await store.members.list({ q: 'lovelace' }, page, NOW)).items.map((m) => m.id)).toEqual(['paid']);
    expect((await store.members.list({ q: 'free@' }, page, NOW)).items.map((m) => m.id)).toEqual(['free']);
    expect((await store.members.list({ q: '%' }, page, NOW)).total).toBe(0);
    expect((await store.members.list({ status: 'paid' }, page, NOW)).items.map((m) => m.id)).toEqual(['paid']);
    expect((await store.members.list({ status: 'past-due' }, page, NOW)).items.map((m) => m.id)).toEqual(['late']);
    expect((await store.members.list({ status: 'comped' }, page, NOW)).items.map((m) => m.id)).toEqual(['comp']);
    // Past the grace period the late payer reads as free.
    expect((await store.members.list({ status: 'free' }, page, NOW + 10 * DAY)).items.map((m) => m.id)).toEqual(['late', 'free']);
    expect((await store.members.all()).map((m) => m.id)).toEqual(['free', 'paid', 'late', 'comp']);
  });

  it('deletes a member, and keeps members across a reopen', async () => {
    await store.members.insert(member('m1', { stripeCustomerId: 'cus_9' }));
    await store.members.insert(member('m2'));
    expect(await store.members.delete('m2')).toBe(true);
    expect(await store.members.delete('m2')).toBe(false);
    await store.close();
    store = await open();
    expect((await store.members.all()).map((m) => m.id)).toEqual(['m1']);
    expect((await store.members.getByStripeCustomer('cus_9'))!.email).toBe('m1@example.com');
    expect(await store.members.getByEmail('m2@example.com')).toBeUndefined();
    if (kind === 'lowdb')
      expect((readCollectionDocument(dir, 'members') as { members: Member[] }).members.map((m) => m.id)).toEqual(['m1']);
  });
});
