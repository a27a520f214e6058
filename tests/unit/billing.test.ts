/** The pure parts of paid memberships (issue 48): money as people read it, and the member's history keeping Stripe's event ids. */
import { describe, expect, it } from 'vitest';
import { formatMoney, isKnownCurrency } from '../../src/lib/money.ts';
import { appendHistory } from '../../src/server/members/history.ts';
import { MEMBER_HISTORY_LIMIT, type MemberEvent } from '../../src/schemas/member.ts';

const DAY_MS = 86_400_000;

describe('formatMoney', () => {
  it('reads amounts in the minor unit Stripe uses for each currency', () => {
    expect(formatMoney(500, 'usd')).toBe('$5.00');
    expect(formatMoney(5000, 'eur')).toBe('€50.00');
    expect(formatMoney(500, 'jpy')).toBe('¥500');
    expect(formatMoney(5000, 'kwd')).toMatch(/^KWD\s5\.000$/);
  });

  it('knows currency codes from made-up ones', () => {
    expect(isKnownCurrency('usd')).toBe(true);
    expect(isKnownCurrency('xyz')).toBe(false);
  });
});

describe('appendHistory', () => {
  const now = Date.parse('2027-06-01T00:00:00Z');
  const line = (at: number, id?: string): MemberEvent => ({
    at: new Date(at).toISOString(),
    kind: id ? 'payment-succeeded' : 'signed-in',
    text: 'A line.',
    ...(id && { stripeEventId: id }),
  });

  it('appends under the limit', () => {
    expect(appendHistory([line(now - DAY_MS)], line(now), now)).toHaveLength(2);
  });

  it('drops the oldest lines past the limit, but never a Stripe event younger than 30 days', () => {
    const filler = Array.from({ length: MEMBER_HISTORY_LIMIT - 2 }, (_, i) => line(now - 39 * DAY_MS + i));
    // The oldest line is a Stripe event of 10 days ago (kept), the next one of 40 days ago (may go).
    const history = [line(now - 10 * DAY_MS, 'evt_recent'), line(now - 40 * DAY_MS, 'evt_too_old'), ...filler];
    const next = appendHistory(history, line(now, 'evt_new'), now);
    expect(next).toHaveLength(MEMBER_HISTORY_LIMIT);
    expect(next.map((l) => l.stripeEventId).filter(Boolean)).toEqual(['evt_recent', 'evt_new']);
    expect(next.slice(1, -1)).toEqual(filler);
  });
});
