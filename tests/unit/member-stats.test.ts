/** The Overview's member figures (issue 48) from hand-made members: who exists, pays or is comped at each day's end, and the MRR. */
import { describe, expect, it } from 'vitest';
import { MEMBER_HISTORY_LIMIT, type Member, type MemberEvent, type MemberSubscription } from '../../src/schemas/member.ts';
import { deriveMemberSeries, monthlyAmount, subscriptionAt } from '../../src/server/members/stats.ts';
import { appendHistory } from '../../src/server/members/history.ts';

/** The end of each day of November 2026 from the 1st to the 10th (UTC), as the Overview asks. */
const DAYS = Array.from({ length: 10 }, (_, i) => Date.parse(`2026-11-${String(i + 2).padStart(2, '0')}T00:00:00Z`) - 1);
const at = (day: number, time = '00:00') => `2026-11-${String(day).padStart(2, '0')}T${time}:00.000Z`;

function member(id: string, createdDay: number, change: Partial<Member> = {}): Member {
  return {
    id,
    email: `${id}@example.com`,
    name: id,
    newsletter: false,
    createdAt: createdDay > 0 ? at(createdDay, '08:00') : '2026-10-30T08:00:00.000Z',
    history: [],
    ...change,
  };
}

function sub(startDay: number, change: Partial<MemberSubscription> = {}): MemberSubscription {
  return {
    id: `sub_${startDay}`,
    status: 'active',
    interval: 'month',
    amount: 500,
    currency: 'usd',
    startedAt: at(startDay, '12:00'),
    currentPeriodEnd: at(startDay + 28 > 30 ? 30 : startDay + 28),
    cancelAtPeriodEnd: false,
    syncedAt: at(startDay, '12:00'),
    ...change,
  };
}

const line = (kind: MemberEvent['kind'], when: string): MemberEvent => ({ at: when, kind, text: kind });

const MEMBERS: Member[] = [
  // Free all along.
  member('free', 1),
  // Monthly from the 3rd at noon.
  member('monthly', 1, { subscription: sub(3) }),
  // Yearly (6000 a year: 500 a month) from the 2nd, cancelled at the period's end on the 6th.
  member('yearly-cancelled', 2, {
    subscription: sub(2, {
      interval: 'year',
      amount: 6000,
      status: 'canceled',
      cancelAtPeriodEnd: true,
      currentPeriodEnd: at(6),
      endedAt: at(6),
      syncedAt: at(6),
    }),
  }),
  // Behind since the 2nd: past due (paying) through the 7-day grace, free from the 9th.
  member('past-due', 1, { subscription: sub(1, { amount: 1000, status: 'past_due', pastDueSince: at(2) }) }),
  // Comped from the 5th until the 8th, paying nothing.
  member('comped', 0, { comp: { at: at(5, '09:00'), by: 'staff', until: at(8) }, history: [line('comp-granted', at(5, '09:00'))] }),
  // An earlier subscription (the 2nd to the 4th) known only from the history, then a new one from the 7th at 300.
  member('came-back', 1, {
    subscription: sub(7, { amount: 300 }),
    history: [
      line('subscription-started', at(2, '06:00')),
      line('subscription-ended', at(4, '10:00')),
      line('subscription-started', at(7, '12:00')),
    ],
  }),
  // Pays in euros: counted as paying, not in a dollar MRR.
  member('euro', 6, { subscription: sub(6, { amount: 400, currency: 'eur' }) }),
  // Pays and is comped too: counted as paying (the card is still charged), not as comped.
  member('paying-and-comped', 1, { subscription: sub(1, { amount: 200 }), comp: { at: at(3), by: 'staff' } }),
  // On a trial from the 9th: the paid level, no revenue yet.
  member('trial', 9, { subscription: sub(9, { status: 'trialing' }) }),
  // A first payment that never went through.
  member('incomplete', 2, { subscription: sub(2, { status: 'incomplete_expired', endedAt: at(3) }) }),
];

describe('deriveMemberSeries', () => {
  const { points, otherCurrency } = deriveMemberSeries(MEMBERS, DAYS, 'usd');

  it('counts members from their sign-up', () => {
    expect(points.map((p) => p.members)).toEqual([6, 8, 8, 8, 8, 9, 9, 9, 10, 10]);
  });

  it('counts paying members: paid and past due within the grace, earlier subscriptions from the history, never a comp', () => {
    expect(points.map((p) => p.paying)).toEqual([2, 4, 5, 4, 4, 4, 5, 5, 5, 5]);
  });

  it('counts comped members who do not pay, while the comp lasts', () => {
    expect(points.map((p) => p.comped)).toEqual([0, 0, 0, 0, 1, 1, 1, 0, 0, 0]);
  });

  it('sums the monthly price (yearly / 12) of paying subscriptions in the plans currency, trials aside', () => {
    expect(points.map((p) => p.mrr)).toEqual([1200, 2000, 2500, 2200, 2200, 1700, 2000, 2000, 1000, 1000]);
    expect(otherCurrency).toBe(1);
  });

  it('gives the same figures whatever the order of the members, and for one day alone', () => {
    expect(deriveMemberSeries([...MEMBERS].reverse(), DAYS, 'usd').points).toEqual(points);
    expect(deriveMemberSeries(MEMBERS, [DAYS[5]!], 'USD').points).toEqual([points[5]]);
    expect(deriveMemberSeries(MEMBERS, [], 'usd').points).toEqual([]);
  });
});

describe('the pieces', () => {
  it('prices a month of a yearly plan at a twelfth', () => {
    expect(monthlyAmount({ interval: 'year', amount: 6000 })).toBe(500);
    expect(monthlyAmount({ interval: 'month', amount: 700 })).toBe(700);
  });

  it('reads a subscription as it stood: active before it fell behind or was cancelled', () => {
    const behind = sub(1, { status: 'past_due', pastDueSince: at(4) });
    expect(subscriptionAt(behind, Date.parse(at(3)))?.status).toBe('active');
    expect(subscriptionAt(behind, Date.parse(at(5)))?.status).toBe('past_due');
    expect(subscriptionAt(behind, Date.parse(at(1)))).toBeUndefined();
    const unpaid = sub(1, { status: 'unpaid', pastDueSince: at(4), syncedAt: at(9) });
    expect(subscriptionAt(unpaid, Date.parse(at(5)))?.status).toBe('past_due');
    expect(subscriptionAt(unpaid, Date.parse(at(9)))?.status).toBe('unpaid');
  });

  it('keeps the history within its limit, dropping the oldest lines but not a recent Stripe event', () => {
    const now = Date.parse('2026-11-30T00:00:00Z');
    const old = Array.from({ length: MEMBER_HISTORY_LIMIT }, (_, i) => ({
      ...line('signed-in', new Date(now - (MEMBER_HISTORY_LIMIT - i) * 60_000).toISOString()),
      ...(i === 0 ? { stripeEventId: 'evt_recent' } : {}),
    }));
    const next = appendHistory(old, line('comp-granted', new Date(now).toISOString()), now);
    expect(next).toHaveLength(MEMBER_HISTORY_LIMIT);
    expect(next[0]!.stripeEventId).toBe('evt_recent');
    expect(next.at(-1)!.kind).toBe('comp-granted');
    expect(next).not.toContain(old[1]);
  });
});
