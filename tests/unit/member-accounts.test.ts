/**
 * Readers' accounts (issue 48) where the API cannot set the stage: deleting an account while Stripe would
 * still charge it, the export without internal fields, and a link past its hour. A real store (both kinds).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Member } from '../../src/schemas/member.ts';
import type { Runtime } from '../../src/server/runtime.ts';
import {
  confirmSignInLink,
  deleteAccount,
  exportMemberData,
  requestSignInLink,
  RUNNING_SUBSCRIPTION_REFUSAL,
} from '../../src/server/members/accounts.ts';
import { hashToken } from '../../src/security/secrets.ts';
import { latestSignInLink } from '../helpers/members.ts';
import { appErrorOf, closeQuietly, makeRuntime } from './support.ts';

let runtime: Runtime & { dataDir: string };

beforeAll(async () => {
  runtime = await makeRuntime();
});

afterAll(async () => {
  await closeQuietly(runtime?.store);
});

const DAY = 86_400_000;
let counter = 0;

function member(overrides: Partial<Member> = {}): Member {
  counter++;
  return {
    id: `member-${counter}`,
    email: `member${counter}@example.com`,
    name: `Member ${counter}`,
    newsletter: false,
    createdAt: new Date().toISOString(),
    history: [],
    ...overrides,
  };
}

function subscription(overrides: Partial<NonNullable<Member['subscription']>> = {}): NonNullable<Member['subscription']> {
  const now = Date.now();
  return {
    id: 'sub_123',
    status: 'active',
    interval: 'month',
    amount: 500,
    currency: 'usd',
    startedAt: new Date(now - 10 * DAY).toISOString(),
    currentPeriodEnd: new Date(now + 20 * DAY).toISOString(),
    cancelAtPeriodEnd: false,
    syncedAt: new Date(now - DAY).toISOString(),
    ...overrides,
  };
}

describe('deleting an account', () => {
  it('refuses (409) while a subscription still renews, and goes ahead once it is set to cancel', async () => {
    const paying = member({ subscription: subscription() });
    expect(await runtime.store.members.insert(paying)).toBe(true);
    const refused = await appErrorOf(deleteAccount(runtime, paying));
    expect(refused?.status).toBe(409);
    expect(refused?.message).toBe(RUNNING_SUBSCRIPTION_REFUSAL);
    expect(await runtime.store.members.get(paying.id)).toBeDefined();

    const pastDue = member({ subscription: subscription({ status: 'past_due', pastDueSince: new Date().toISOString() }) });
    await runtime.store.members.insert(pastDue);
    expect((await appErrorOf(deleteAccount(runtime, pastDue)))?.status).toBe(409);

    await runtime.store.members.mutate(paying.id, (m) => ({ ...m, subscription: { ...m.subscription!, cancelAtPeriodEnd: true } }));
    expect(await deleteAccount(runtime, paying)).toEqual({ comments: 0 });
    expect(await runtime.store.members.get(paying.id)).toBeUndefined();

    const ended = member({ subscription: subscription({ status: 'canceled', endedAt: new Date().toISOString() }) });
    await runtime.store.members.insert(ended);
    await deleteAccount(runtime, ended);
    expect(await runtime.store.members.get(ended.id)).toBeUndefined();
  });
});

describe('the export', () => {
  it('holds what the member sees, never Stripe’s ids, the granting staff member or webhook event ids', async () => {
    const record = member({
      stripeCustomerId: 'cus_secret',
      subscription: subscription({ id: 'sub_secret' }),
      comp: { at: new Date().toISOString(), by: 'staff-user-id' },
      history: [
        { at: new Date().toISOString(), kind: 'payment-succeeded', text: 'Paid $5.00', stripeEventId: 'evt_secret', by: 'staff-user-id' },
      ],
    });
    await runtime.store.members.insert(record);
    const data = await exportMemberData(runtime, record);
    const text = JSON.stringify(data);
    for (const internal of ['cus_secret', 'sub_secret', 'evt_secret', 'staff-user-id', 'syncedAt']) expect(text).not.toContain(internal);
    expect(data.account.subscription).toMatchObject({ status: 'active', amount: 500, interval: 'month' });
    expect(data.account.history).toEqual([{ at: record.history[0]!.at, kind: 'payment-succeeded', text: 'Paid $5.00' }]);
    expect(data.account.comp).toEqual({ since: record.comp!.at });
  });
});

describe('the sign-in link', () => {
  it('signs nobody in once its hour is over, and stays unusable after', async () => {
    const email = 'late@example.com';
    await requestSignInLink(runtime, { email, name: 'Late Reader' });
    const token = new URL(await latestSignInLink(runtime.dataDir, email), 'http://x').searchParams.get('token')!;
    const key = `member-link:${hashToken(token)}`;
    const now = Date.now();
    const link = await runtime.store.limits.get<{ expiresAt: number }>(key, now);
    expect(link?.expiresAt).toBeGreaterThan(now + 59 * 60_000);
    // The hour is over (as the link itself records it), though the store has not dropped the entry yet.
    await runtime.store.limits.set(key, { ...link, expiresAt: now - 1 }, now + 60_000);
    expect(await confirmSignInLink(runtime, token)).toEqual({ kind: 'expired' });
    expect(await runtime.store.members.getByEmail(email)).toBeUndefined();
  });
});
