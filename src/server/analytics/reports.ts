/**
 * The analytics API's answers (issue 33), read from the stored view buckets: days are the newsroom's
 * days in BRIEFING_TZ, and an author sees the figures of their own articles only.
 */
import type { User } from '../../schemas/auth.ts';
import type { ArticleRecord } from '../../schemas/article.ts';
import {
  DEVICES,
  MAX_RANGE_DAYS,
  REFERRER_KINDS,
  type AnalyticsSummary,
  type ArticleAnalytics,
  type ArticleAnalyticsQuery,
  type Device,
  type ReferrerKind,
  type ReferrerReport,
  type ReferrersQuery,
  type Sparklines,
  type SparklinesQuery,
  type SummaryQuery,
  type TopArticles,
  type TopQuery,
  type ViewCount,
} from '../../schemas/analytics.ts';
import { PERMISSIONS, roleOf } from '../../lib/permissions.ts';
import { nowMs } from '../clock.ts';
import { badRequest, notFound } from '../errors.ts';
import { forbidden } from '../permissions.ts';
import type { Runtime } from '../runtime.ts';
import { addDays, dayStartMs, daysBetween, hourStartMs, isoMinute, listDays, newsroomDay } from '../calendar.ts';

/** Whose figures a user may read: everything, or only the articles they created. */
type Scope = { ownerId?: string };

const HOUR_MS = 3_600_000;
/** Hourly figures are kept 14 days; a longer hourly range would be zeros. */
const MAX_HOURLY_DAYS = 14;
/** Enough for every article of an author, or of the newsroom's days in a range. */
const LIST_ALL = { offset: 0, limit: 1_000_000 };

function scopeOf(user: User): Scope {
  return PERMISSIONS[roleOf(user)]['analytics.read'] === 'all' ? {} : { ownerId: user.id };
}

/** Site-wide figures: only for roles that read every article's. */
function assertSiteWide(user: User): void {
  if (scopeOf(user).ownerId !== undefined) throw forbidden(roleOf(user), 'analytics.read');
}

function owns(scope: Scope, record: Pick<ArticleRecord, 'createdBy'> | undefined): boolean {
  return scope.ownerId === undefined || (record !== undefined && record.createdBy === scope.ownerId);
}

function today(runtime: Runtime): string {
  return newsroomDay(nowMs(), runtime.config.BRIEFING_TZ);
}

/** from/to with their defaults (`defaultDays` up to today), checked: in order and at most two years (the members' figures use it too). */
export function rangeOf(runtime: Runtime, query: { from?: string | undefined; to?: string | undefined }, defaultDays: number) {
  const to = query.to ?? (query.from ? maxDay(today(runtime), query.from) : today(runtime));
  const from = query.from ?? addDays(to, -(defaultDays - 1));
  if (from > to) throw badRequest('from must not be after to', [{ path: ['from'], message: 'from must not be after to' }]);
  if (daysBetween(from, to) > MAX_RANGE_DAYS)
    throw badRequest(`The range spans more than ${MAX_RANGE_DAYS} days`, [{ path: ['to'], message: `At most ${MAX_RANGE_DAYS} days` }]);
  return { from, to };
}

function maxDay(a: string, b: string): string {
  return a > b ? a : b;
}

/** Sums counts per key. */
function sumBy(counts: readonly ViewCount[], keyOf: (count: ViewCount) => string | undefined): Map<string, number> {
  const sums = new Map<string, number>();
  for (const count of counts) {
    const key = keyOf(count);
    if (key !== undefined) sums.set(key, (sums.get(key) ?? 0) + count.views);
  }
  return sums;
}

/** A `section\t...` key's section and the rest. */
function splitKey(key: string): [string, string] {
  const tab = key.indexOf('\t');
  return [key.slice(0, tab), key.slice(tab + 1)];
}

async function dailySections(runtime: Runtime, from: string, to: string, section: string | undefined) {
  const counts = await runtime.store.analytics.listViews('day', 'section', from, addDays(to, 1), section ? [section] : undefined);
  const days = new Map(listDays(from, to).map((day) => [day, { day, views: 0, sections: {} as Record<string, number> }]));
  for (const count of counts) {
    const entry = days.get(count.start);
    if (!entry) continue;
    entry.views += count.views;
    entry.sections[count.key] = (entry.sections[count.key] ?? 0) + count.views;
  }
  return [...days.values()];
}

export async function summarize(runtime: Runtime, user: User, query: SummaryQuery): Promise<AnalyticsSummary> {
  assertSiteWide(user);
  const { from, to } = rangeOf(runtime, query, 30);
  const tz = runtime.config.BRIEFING_TZ;
  const section = query.section;
  const span = daysBetween(from, to);
  const [days, previousDays, minutes, deviceCounts, subscribers, published] = await Promise.all([
    dailySections(runtime, from, to, section),
    dailySections(runtime, addDays(from, -span), addDays(from, -1), section),
    runtime.store.analytics.listViews('minute', 'section', isoMinute(Math.floor(nowMs() / 60_000) * 60_000 - 29 * 60_000), '\uffff'),
    runtime.store.analytics.listViews('day', 'device', from, addDays(to, 1)),
    subscribersByDay(runtime, from, to),
    publishedByDay(runtime, from, to, section),
  ]);
  const devices = Object.fromEntries(DEVICES.map((device) => [device, 0])) as Record<Device, number>;
  for (const count of deviceCounts) {
    const [countSection, device] = splitKey(count.key);
    if ((!section || countSection === section) && device in devices) devices[device as Device] += count.views;
  }
  const previous = previousDays.map(({ day, views }) => ({ day, views }));
  return {
    timeZone: tz,
    from,
    to,
    ...(section ? { section } : {}),
    days,
    previous,
    totals: { views: sum(days.map((d) => d.views)), previousViews: sum(previous.map((d) => d.views)) },
    readingNow: sum(minutes.filter((count) => !section || count.key === section).map((count) => count.views)),
    devices,
    subscribers,
    published,
  };
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

/** Running totals at the end of each day: confirmed and still subscribed, and unsubscribed so far. */
async function subscribersByDay(runtime: Runtime, from: string, to: string) {
  const tz = runtime.config.BRIEFING_TZ;
  const { items } = await runtime.store.subscribers.listFiltered({}, LIST_ALL);
  const dayOf = (at: string | undefined) => (at ? newsroomDay(Date.parse(at), tz) : undefined);
  // One pass over the subscribers: what each day adds to the two running totals.
  const changes = new Map<string, { confirmed: number; unsubscribed: number }>();
  const change = (day: string, key: 'confirmed' | 'unsubscribed', by: number) => {
    let entry = changes.get(day);
    if (!entry) changes.set(day, (entry = { confirmed: 0, unsubscribed: 0 }));
    entry[key] += by;
  };
  for (const s of items) {
    // Records from before double opt-in have no confirmation and count as confirmed when created.
    const confirmed = dayOf(s.confirmedAt ?? (s.confirmTokenHash ? undefined : s.createdAt));
    const unsubscribed = dayOf(s.unsubscribedAt);
    if (confirmed) {
      change(confirmed, 'confirmed', 1);
      if (unsubscribed) change(unsubscribed > confirmed ? unsubscribed : confirmed, 'confirmed', -1);
    }
    if (unsubscribed) change(unsubscribed, 'unsubscribed', 1);
  }
  const totals = { confirmed: 0, unsubscribed: 0 };
  for (const [day, entry] of changes)
    if (day < from) {
      totals.confirmed += entry.confirmed;
      totals.unsubscribed += entry.unsubscribed;
    }
  return listDays(from, to).map((day) => {
    const entry = changes.get(day);
    if (entry) {
      totals.confirmed += entry.confirmed;
      totals.unsubscribed += entry.unsubscribed;
    }
    return { day, ...totals };
  });
}

/** Articles published each day: editorial ones, and per feed (its label). */
async function publishedByDay(runtime: Runtime, from: string, to: string, section: string | undefined) {
  const tz = runtime.config.BRIEFING_TZ;
  const articles = await runtime.store.articles.list(
    {
      statuses: ['published'],
      section: section as ArticleRecord['section'] | undefined,
      dateFrom: new Date(dayStartMs(from, tz)).toISOString(),
      dateTo: new Date(dayStartMs(addDays(to, 1), tz) - 1).toISOString(),
    },
    LIST_ALL,
  );
  const days = new Map(listDays(from, to).map((day) => [day, { day, editorial: 0, feeds: {} as Record<string, number> }]));
  for (const article of articles) {
    if (!article.publishedAt) continue;
    const entry = days.get(newsroomDay(Date.parse(article.publishedAt), tz));
    if (!entry) continue;
    if (!article.origin) entry.editorial++;
    else {
      const label = article.sourceLabel ?? article.origin.sourceId;
      entry.feeds[label] = (entry.feeds[label] ?? 0) + 1;
    }
  }
  return [...days.values()];
}

/** The ids an author may see figures of (undefined: every article). */
async function ownedIds(runtime: Runtime, scope: Scope): Promise<string[] | undefined> {
  if (scope.ownerId === undefined) return undefined;
  const own = await runtime.store.articles.list({ createdBy: scope.ownerId }, LIST_ALL);
  return own.map((article) => article.id);
}

export async function topArticles(runtime: Runtime, user: User, query: TopQuery): Promise<TopArticles> {
  const scope = scopeOf(user);
  const tz = runtime.config.BRIEFING_TZ;
  const now = nowMs();
  const day = today(runtime);
  const keys = await ownedIds(runtime, scope);
  if (keys?.length === 0) return { period: query.period, items: [] };
  const days = query.period === 'today' ? 1 : query.period === '7d' ? 7 : 30;
  const first = addDays(day, -(days - 1));
  const counts = await runtime.store.analytics.listViews('day', 'article', first, addDays(day, 1), keys);
  const totals = [...sumBy(counts, (count) => count.key)].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const chosen: { record: ArticleRecord; views: number }[] = [];
  for (const [id, views] of totals) {
    if (chosen.length >= query.limit) break;
    const record = await runtime.store.articles.get(id);
    // A deleted article's figures stay stored but leave the list.
    if (record && owns(scope, record)) chosen.push({ record, views });
  }
  const ids = chosen.map((c) => c.record.id);
  let sparks: Map<string, number[]>;
  if (query.period === 'today') {
    const midnight = dayStartMs(day, tz);
    const hours = Math.max(1, Math.floor((hourStartMs(now, tz) - midnight) / HOUR_MS) + 1);
    const hourly = ids.length
      ? await runtime.store.analytics.listViews('hour', 'article', isoMinute(midnight), isoMinute(midnight + hours * HOUR_MS), ids)
      : [];
    sparks = new Map(ids.map((id) => [id, new Array<number>(hours).fill(0)]));
    for (const count of hourly) {
      const index = Math.round((Date.parse(count.start) - midnight) / HOUR_MS);
      const spark = sparks.get(count.key);
      if (spark && index >= 0 && index < hours) spark[index]! += count.views;
    }
  } else {
    sparks = dailySparks(counts, ids, first, days);
  }
  return {
    period: query.period,
    items: chosen.map(({ record, views }) => ({
      id: record.id,
      title: record.title,
      slug: record.slug,
      section: record.section,
      views,
      spark: sparks.get(record.id) ?? [],
    })),
  };
}

function dailySparks(counts: readonly ViewCount[], ids: readonly string[], first: string, days: number): Map<string, number[]> {
  const sparks = new Map(ids.map((id) => [id, new Array<number>(days).fill(0)]));
  for (const count of counts) {
    const spark = sparks.get(count.key);
    const index = daysBetween(first, count.start) - 1;
    if (spark && index >= 0 && index < days) spark[index]! += count.views;
  }
  return sparks;
}

export async function referrerReport(runtime: Runtime, user: User, query: ReferrersQuery): Promise<ReferrerReport> {
  assertSiteWide(user);
  const { from, to } = rangeOf(runtime, query, 30);
  const counts = await runtime.store.analytics.listViews('day', 'referrer', from, addDays(to, 1));
  const kinds = Object.fromEntries(REFERRER_KINDS.map((kind) => [kind, 0])) as Record<ReferrerKind, number>;
  const hosts = new Map<string, { host: string; kind: ReferrerKind; views: number }>();
  for (const count of counts) {
    const [section, rest] = splitKey(count.key);
    if (query.section && section !== query.section) continue;
    const [kind, host] = splitKey(rest) as [ReferrerKind, string];
    if (!(kind in kinds)) continue;
    kinds[kind] += count.views;
    const id = `${kind}\t${host}`;
    const entry = hosts.get(id);
    if (entry) entry.views += count.views;
    else hosts.set(id, { host, kind, views: count.views });
  }
  const items = [...hosts.values()].sort((a, b) => b.views - a.views || (a.host < b.host ? -1 : 1)).slice(0, query.limit);
  return { from, to, kinds, items };
}

export async function articleAnalytics(runtime: Runtime, user: User, id: string, query: ArticleAnalyticsQuery): Promise<ArticleAnalytics> {
  const record = await runtime.store.articles.get(id);
  if (!record) throw notFound('Article');
  if (!owns(scopeOf(user), record)) throw forbidden(roleOf(user), 'analytics.read');
  const tz = runtime.config.BRIEFING_TZ;
  const now = nowMs();
  const published = record.publishedAt ? Date.parse(record.publishedAt) : undefined;
  const granularity = query.granularity ?? (published !== undefined && now - published < MAX_HOURLY_DAYS * 86_400_000 ? 'hour' : 'day');
  const explicit = query.from !== undefined || query.to !== undefined;
  let points: { t: string; views: number }[];
  if (granularity === 'day') {
    const { from, to } = explicit
      ? rangeOf(runtime, query, 30)
      : rangeOf(
          runtime,
          {
            from: published !== undefined ? maxDay(newsroomDay(published, tz), addDays(today(runtime), -(MAX_RANGE_DAYS - 1))) : undefined,
          },
          30,
        );
    const counts = await runtime.store.analytics.listViews('day', 'article', from, addDays(to, 1), [id]);
    const byDay = sumBy(counts, (count) => count.start);
    points = listDays(from, to).map((day) => ({ t: day, views: byDay.get(day) ?? 0 }));
  } else {
    let start: number;
    let end: number;
    if (explicit) {
      const { from, to } = rangeOf(runtime, query, 1);
      if (daysBetween(from, to) > MAX_HOURLY_DAYS)
        throw badRequest(`Hourly figures cover at most ${MAX_HOURLY_DAYS} days`, [
          { path: ['granularity'], message: `At most ${MAX_HOURLY_DAYS} days by hour` },
        ]);
      start = dayStartMs(from, tz);
      end = Math.min(dayStartMs(addDays(to, 1), tz), hourStartMs(now, tz) + HOUR_MS);
    } else {
      end = hourStartMs(now, tz) + HOUR_MS;
      start = hourStartMs(Math.max(published ?? now, now - MAX_HOURLY_DAYS * 86_400_000), tz);
    }
    const counts = await runtime.store.analytics.listViews('hour', 'article', isoMinute(start), isoMinute(Math.max(start, end)), [id]);
    const byHour = sumBy(counts, (count) => count.start);
    points = [];
    for (let t = start; t < end; t += HOUR_MS) points.push({ t: new Date(t).toISOString(), views: byHour.get(isoMinute(t)) ?? 0 });
  }
  const [counters, comments] = await Promise.all([runtime.store.counters.get(id), runtime.store.comments.count({ articleId: id })]);
  return {
    id,
    title: record.title,
    publishedAt: record.publishedAt,
    granularity,
    points,
    totals: { views: counters.views, likes: counters.likes, dislikes: counters.dislikes, comments },
  };
}

export async function sparklines(runtime: Runtime, user: User, query: SparklinesQuery): Promise<Sparklines> {
  const scope = scopeOf(user);
  let ids = query.ids;
  if (scope.ownerId !== undefined) {
    const records = await Promise.all(ids.map((id) => runtime.store.articles.get(id)));
    ids = ids.filter((_, i) => owns(scope, records[i]));
  }
  const day = today(runtime);
  const first = addDays(day, -(query.days - 1));
  const counts = ids.length ? await runtime.store.analytics.listViews('day', 'article', first, addDays(day, 1), ids) : [];
  return { days: query.days, items: Object.fromEntries(dailySparks(counts, ids, first, query.days)) };
}
