/**
 * The Overview's member figures (issue 48): members, paying members, comped members and monthly recurring
 * revenue at the end of each newsroom day, derived from the members' records and history lines.
 *
 * A record keeps only a member's last subscription and comp; earlier ones are read from the history
 * (`subscription-started` / `-ended`, `comp-granted` / `-removed`), and an earlier subscription counts at
 * the price of the last one (its own price is not stored). Deleted members leave the figures altogether.
 */
import {
  PAST_DUE_GRACE_DAYS,
  membershipPlansSchema,
  memberStatus,
  type Member,
  type MemberEvent,
  type MemberSubscription,
} from '../../schemas/member.ts';
import type { MemberStats, MemberStatsQuery } from '../../schemas/member-admin.ts';
import { addDays, dayStartMs, listDays } from '../calendar.ts';
import { nowMs } from '../clock.ts';
import { rangeOf } from '../analytics/reports.ts';
import type { Runtime } from '../runtime.ts';

const DAY_MS = 86_400_000;
/** The meta key the plans are saved under (the brief's settled name). */
const PLANS_KEY = 'members.plans';

/** What one member adds to a day's figures. */
type MemberState = { exists: boolean; paying: boolean; comped: boolean; mrr: number; otherCurrency: boolean };
const NONE: MemberState = { exists: false, paying: false, comped: false, mrr: 0, otherCurrency: false };

/** A subscription's price per month in its minor unit: the monthly price, or the yearly one over 12. */
export function monthlyAmount(sub: Pick<MemberSubscription, 'amount' | 'interval'>): number {
  return sub.interval === 'year' ? sub.amount / 12 : sub.amount;
}

const ms = (iso: string | undefined) => (iso === undefined ? undefined : Date.parse(iso));

/**
 * The last subscription as it stood at `t`, for memberStatus to judge: not yet started, ended, behind
 * on payment since `pastDueSince`, or (before any of that) active.
 */
export function subscriptionAt(sub: MemberSubscription | undefined, t: number): MemberSubscription | undefined {
  if (!sub || Date.parse(sub.startedAt) > t) return undefined;
  // A first payment that never went through: never paid.
  if (sub.status === 'incomplete' || sub.status === 'incomplete_expired') return undefined;
  const behind = ms(sub.pastDueSince);
  const { pastDueSince: _since, ...clean } = sub;
  if (sub.status === 'active' || sub.status === 'trialing') return sub;
  if (sub.status === 'past_due') return behind !== undefined && behind > t ? { ...clean, status: 'active' } : sub;
  // Cancelled, unpaid or paused: it stopped when it ended (or when Stripe last told us so).
  const stopped = ms(sub.endedAt) ?? Date.parse(sub.syncedAt);
  if (stopped <= t) return sub;
  if (behind !== undefined && behind <= t) return { ...sub, status: 'past_due' };
  return { ...clean, status: 'active' };
}

type Span = [start: number, end: number];

/**
 * [start, end) spans from the history lines before `before`: each `open` line starts one (a second while
 * one is open continues it) and the next `close` line ends it; one still open ends at `before`, where
 * the record's own (current) subscription or comp begins.
 */
function spansOf(history: readonly MemberEvent[], open: MemberEvent['kind'], close: MemberEvent['kind'], before: number): Span[] {
  const spans: Span[] = [];
  let start: number | undefined;
  for (const line of history) {
    const at = Date.parse(line.at);
    if (at >= before) break;
    if (line.kind === open) start ??= at;
    else if (line.kind === close && start !== undefined) {
      spans.push([start, at]);
      start = undefined;
    }
  }
  if (start !== undefined && Number.isFinite(before)) spans.push([start, before]);
  return spans;
}

const covers = (spans: readonly Span[], t: number) => spans.some(([start, end]) => start <= t && t < end);

/** A member's figures as a function of the instant, and the instants where they may change. */
function memberTimeline(member: Member, currency: string) {
  const sub = member.subscription;
  const created = Date.parse(member.createdAt);
  const subStart = sub ? Date.parse(sub.startedAt) : Infinity;
  const earlierSubs = spansOf(member.history, 'subscription-started', 'subscription-ended', subStart);
  const compStart = member.comp ? Date.parse(member.comp.at) : Infinity;
  const earlierComps = spansOf(member.history, 'comp-granted', 'comp-removed', compStart);
  const monthly = sub ? monthlyAmount(sub) : 0;
  const sameCurrency = sub !== undefined && sub.currency.toLowerCase() === currency;

  const stateAt = (t: number): MemberState => {
    if (created > t) return NONE;
    const subscription = subscriptionAt(sub, t);
    const comp = member.comp && compStart <= t ? member.comp : covers(earlierComps, t) ? { at: member.createdAt, by: '' } : undefined;
    // memberStatus is the one rule: asked once without the comp (does the member pay?) and once with it.
    const paysNow = subscription !== undefined && memberStatus({ ...member, comp: undefined, subscription }, t) !== 'free';
    const paying = paysNow || covers(earlierSubs, t);
    const comped = !paying && memberStatus({ ...member, subscription, comp }, t) === 'comped';
    return {
      exists: true,
      paying,
      comped,
      // A trial has the paid level but brings no revenue until its first payment (as Stripe counts MRR).
      mrr: paying && sameCurrency && subscription?.status !== 'trialing' ? monthly : 0,
      otherCurrency: paying && !sameCurrency,
    };
  };

  const grace = PAST_DUE_GRACE_DAYS * DAY_MS;
  const changes = [
    created,
    ...(sub
      ? [sub.startedAt, sub.endedAt, sub.syncedAt, sub.pastDueSince, sub.currentPeriodEnd].map(ms).filter((t) => t !== undefined)
      : []),
    ...(sub ? [(ms(sub.pastDueSince) ?? Date.parse(sub.currentPeriodEnd)) + grace] : []),
    ...(member.comp ? [compStart, ms(member.comp.until)].filter((t) => t !== undefined) : []),
    ...member.history.map((line) => Date.parse(line.at)),
  ].filter((t) => Number.isFinite(t));
  return { stateAt, changes: changes.sort((a, b) => a - b) };
}

/** The first index of `sorted` whose value is at least `t` (sorted.length when none is). */
function firstAtLeast(sorted: readonly number[], t: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export type MemberSeriesPoint = { members: number; paying: number; comped: number; mrr: number };

/**
 * The figures at each instant of `instants` (ascending): each member is judged only where their state
 * may change, so a year of days over many members costs members x changes, not members x days.
 */
export function deriveMemberSeries(
  members: readonly Member[],
  instants: readonly number[],
  currency: string,
): { points: MemberSeriesPoint[]; otherCurrency: number } {
  const n = instants.length;
  const delta = Array.from({ length: n + 1 }, () => ({ members: 0, paying: 0, comped: 0, mrr: 0, other: 0 }));
  const add = (i: number, from: MemberState, to: MemberState) => {
    const d = delta[i]!;
    d.members += Number(to.exists) - Number(from.exists);
    d.paying += Number(to.paying) - Number(from.paying);
    d.comped += Number(to.comped) - Number(from.comped);
    d.mrr += to.mrr - from.mrr;
    d.other += Number(to.otherCurrency) - Number(from.otherCurrency);
  };
  if (n === 0) return { points: [], otherCurrency: 0 };
  const wanted = currency.toLowerCase();
  for (const member of members) {
    const { stateAt, changes } = memberTimeline(member, wanted);
    let previous = stateAt(instants[0]!);
    add(0, NONE, previous);
    let lastIndex = 0;
    for (const t of changes) {
      const index = firstAtLeast(instants, t);
      if (index <= lastIndex || index >= n) continue;
      const state = stateAt(instants[index]!);
      add(index, previous, state);
      previous = state;
      lastIndex = index;
    }
  }
  const points: MemberSeriesPoint[] = [];
  const running = { members: 0, paying: 0, comped: 0, mrr: 0, other: 0 };
  for (let i = 0; i < n; i++) {
    const d = delta[i]!;
    running.members += d.members;
    running.paying += d.paying;
    running.comped += d.comped;
    running.mrr += d.mrr;
    running.other += d.other;
    points.push({ members: running.members, paying: running.paying, comped: running.comped, mrr: Math.round(running.mrr) });
  }
  return { points, otherCurrency: running.other };
}

/** The plans' currency; before any plans are saved, the one most subscriptions use (or usd). */
async function currencyOf(runtime: Runtime, members: readonly Member[]): Promise<string> {
  const plans = membershipPlansSchema.safeParse(await runtime.store.meta.get(PLANS_KEY));
  if (plans.success) return plans.data.currency;
  const used = new Map<string, number>();
  for (const member of members)
    if (member.subscription) used.set(member.subscription.currency, (used.get(member.subscription.currency) ?? 0) + 1);
  return [...used].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 'usd';
}

/** GET /api/members/stats: each day of the range as it stood at its end (today: as it stands now). */
export async function memberStats(runtime: Runtime, query: MemberStatsQuery): Promise<MemberStats> {
  const { from, to } = rangeOf(runtime, query, 30);
  const tz = runtime.config.BRIEFING_TZ;
  const now = nowMs();
  const days = listDays(from, to);
  const instants = days.map((day) => Math.min(dayStartMs(addDays(day, 1), tz) - 1, now));
  const members = await runtime.store.members.all();
  const currency = await currencyOf(runtime, members);
  const { points, otherCurrency } = deriveMemberSeries(members, instants, currency);
  return {
    timeZone: tz,
    from,
    to,
    currency,
    days: days.map((day, i) => ({ day, ...points[i]! })),
    otherCurrency,
  };
}
