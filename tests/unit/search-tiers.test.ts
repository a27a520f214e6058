/**
 * The search tiers' rules: which bundle an article belongs in on a given day, what a day's plan
 * holds, and that every article sits in exactly one bundle before and after the day rolls over.
 */
import { describe, expect, it } from 'vitest';
import {
  bundleOf,
  bundleRange,
  compareBundles,
  dayOf,
  HEAD_MAX,
  isBundleOfDay,
  isDayTier,
  MONTH_IN_WEEKS_FROM,
  monthOfWeek,
  planDayTier,
  planSearchBundles,
  searchJobOf,
  weekOf,
} from '../../src/server/publishing/search-index.ts';

const at = (iso: string) => ({ publishedAt: iso, updatedAt: iso });

describe('search tiers', () => {
  it('puts today (and later) in the head, this month before today in the month so far, older months in their own bundle', () => {
    const today = '2026-11-23';
    expect(bundleOf(at('2026-11-23T00:00:00.000Z'), today)).toBe('head-2026-11-23');
    expect(bundleOf(at('2026-11-23T23:59:59.999Z'), today)).toBe('head-2026-11-23');
    expect(bundleOf(at('2027-01-05T08:00:00.000Z'), today)).toBe('head-2026-11-23');
    expect(bundleOf(at('2026-11-22T23:59:59.999Z'), today)).toBe('2026-11-22');
    expect(bundleOf(at('2026-11-01T00:00:00.000Z'), today)).toBe('2026-11-22');
    expect(bundleOf(at('2026-10-31T23:59:59.999Z'), today)).toBe('2026-10');
    expect(bundleOf(at('2025-02-10T12:00:00.000Z'), today)).toBe('2025-02');
    // No publishedAt: updatedAt decides, as for the sitemaps.
    expect(bundleOf({ updatedAt: '2026-09-01T00:00:00.000Z' }, today)).toBe('2026-09');
  });

  it('dates an article by its UTC day, whatever offset its date was written with', () => {
    expect(dayOf('2026-03-31T23:30:00.000Z')).toBe('2026-03-31');
    expect(dayOf('2026-03-31T23:30:00Z')).toBe('2026-03-31');
    // 23:30 in New York on 31 March is 1 April in UTC, as the sitemaps file it.
    expect(dayOf('2026-03-31T23:30:00.000-04:00')).toBe('2026-04-01');
    expect(dayOf('2026-04-01T01:00:00+02:00')).toBe('2026-03-31');
    expect(dayOf(Date.parse('2026-04-01T00:00:00.000Z') - 1)).toBe('2026-03-31');
    expect(bundleOf(at('2026-10-31T23:30:00.000-04:00'), '2026-11-23')).toBe('2026-11-22');
  });

  it('on the first of a month the month before is closed and nothing is "this month so far"', () => {
    expect(bundleOf(at('2026-11-30T22:00:00.000Z'), '2026-12-01')).toBe('2026-11');
    expect(bundleOf(at('2026-12-01T01:00:00.000Z'), '2026-12-01')).toBe('head-2026-12-01');
  });

  it('a bundle range holds exactly the articles bundleOf puts in it', () => {
    const today = '2026-11-23';
    for (const name of ['head-2026-11-23', '2026-11-22', '2026-10', '2024-02']) {
      const { from, to } = bundleRange(name);
      expect(bundleOf(at(from), today), name).toBe(name);
      expect(bundleOf(at(to), today), name).toBe(name);
      expect(bundleOf(at(new Date(Date.parse(from) - 1).toISOString()), today), name).not.toBe(name);
      if (!name.startsWith('head-')) expect(bundleOf(at(new Date(Date.parse(to) + 1).toISOString()), today), name).not.toBe(name);
    }
    expect(bundleRange('2024-02')).toEqual({ from: '2024-02-01T00:00:00.000Z', to: '2024-02-29T23:59:59.999Z' });
  });

  it('plans the bundles newest first, each article in exactly one, and the plan is the same whatever the order of the input', () => {
    const articles = [
      { slug: 'a', ...at('2026-11-23T09:00:00.000Z') },
      { slug: 'b', ...at('2026-11-05T09:00:00.000Z') },
      { slug: 'c', ...at('2026-10-05T09:00:00.000Z') },
      { slug: 'd', ...at('2026-11-22T09:00:00.000Z') },
      { slug: 'e', ...at('2025-12-31T09:00:00.000Z') },
    ];
    const plan = planSearchBundles(articles, '2026-11-23');
    expect([...plan.keys()]).toEqual(['head-2026-11-23', '2026-11-22', '2026-10', '2025-12']);
    expect([...plan.values()].flat().sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    const reversed = planSearchBundles([...articles].reverse(), '2026-11-23');
    expect([...reversed.keys()]).toEqual([...plan.keys()]);
  });

  it('a day rolling over moves only the head (and yesterday) into the month so far; closed months keep their name and members', () => {
    const articles = Array.from({ length: 54 }, (_, i) => ({
      slug: `s${i}`,
      ...at(new Date(Date.UTC(2026, 9, 1) + i * 86_400_000 + 3_600_000).toISOString()),
    }));
    const before = planSearchBundles(articles, '2026-11-23');
    const after = planSearchBundles(articles, '2026-11-24');
    expect(after.get('2026-10')).toEqual(before.get('2026-10'));
    // Day 54 is 2026-11-23: yesterday's head and the month so far make the new month so far.
    expect(after.get('2026-11-23')!.sort()).toEqual([...before.get('2026-11-22')!, ...before.get('head-2026-11-23')!].sort());
    expect([...after.values()].flat().length).toBe(54);
    expect(after.has('head-2026-11-24')).toBe(false);
  });

  it('plans a closed month of more than MONTH_IN_WEEKS_FROM articles as its weeks, each holding exactly its days', () => {
    const today = '2026-11-23';
    const month = (year: number, m: number, n: number, days: number) =>
      Array.from({ length: n }, (_, i) => ({
        slug: `${year}-${m}-${i}`,
        ...at(new Date(Date.UTC(year, m - 1, 1 + (i % days), 12, Math.floor(i / days))).toISOString()),
      }));
    const large = month(2024, 2, MONTH_IN_WEEKS_FROM + 1, 29);
    const small = month(2026, 9, MONTH_IN_WEEKS_FROM, 30);
    const plan = planSearchBundles([...small, ...large], today);
    expect([...plan.keys()]).toEqual(['2026-09', '2024-02-w5', '2024-02-w4', '2024-02-w3', '2024-02-w2', '2024-02-w1']);
    expect([...plan.values()].flat().sort()).toEqual([...small, ...large].map((a) => a.slug).sort());
    for (const [name, slugs] of plan) {
      const { from, to } = bundleRange(name);
      for (const article of [...small, ...large].filter((a) => slugs.includes(a.slug)))
        expect(article.publishedAt >= from && article.publishedAt <= to, `${article.slug} in ${name}`).toBe(true);
    }
    // The 29th of a leap February is its fifth week, which ends with the month.
    expect(bundleRange('2024-02-w5')).toEqual({ from: '2024-02-29T00:00:00.000Z', to: '2024-02-29T23:59:59.999Z' });
    expect(bundleRange('2024-02-w1')).toEqual({ from: '2024-02-01T00:00:00.000Z', to: '2024-02-07T23:59:59.999Z' });
    expect(bundleRange('2025-12-w5')).toEqual({ from: '2025-12-29T00:00:00.000Z', to: '2025-12-31T23:59:59.999Z' });
    expect(weekOf('2025-12-07')).toBe('2025-12-w1');
    expect(weekOf('2025-12-08')).toBe('2025-12-w2');
    expect(weekOf('2025-12-31')).toBe('2025-12-w5');
    expect(monthOfWeek('2025-12-w3')).toBe('2025-12');
    expect(monthOfWeek('2025-12')).toBeUndefined();
    // The current month is never cut in weeks (it is the month so far, then the head).
    const current = month(2026, 11, MONTH_IN_WEEKS_FROM + 1, 22);
    expect([...planSearchBundles(current, today).keys()]).toEqual(['2026-11-22']);
    expect(isBundleOfDay('2024-02-w5', today)).toBe(true);
    expect(isBundleOfDay('2026-11-w1', today)).toBe(false);
    expect(['2024-02-w1', '2026-09', '2024-03', '2024-02-w5', '2026-11-22'].sort(compareBundles)).toEqual([
      '2026-11-22',
      '2026-09',
      '2024-03',
      '2024-02-w5',
      '2024-02-w1',
    ]);
    expect(searchJobOf('/pagefind/2024-02-w5')).toEqual({ kind: 'bundle', bundle: '2024-02-w5' });
    expect(searchJobOf('/pagefind/2024-02-w6')).toBeUndefined();
  });

  it('sorts names newest first and tells which bundles a day can hold', () => {
    expect(['2026-10', 'head-2026-11-23', '2025-12', '2026-11-22'].sort(compareBundles)).toEqual([
      'head-2026-11-23',
      '2026-11-22',
      '2026-10',
      '2025-12',
    ]);
    expect(isBundleOfDay('head-2026-11-23', '2026-11-23')).toBe(true);
    expect(isBundleOfDay('head-2026-11-22', '2026-11-23')).toBe(false);
    expect(isBundleOfDay('2026-11-22', '2026-11-23')).toBe(true);
    expect(isBundleOfDay('2026-11-21', '2026-11-23')).toBe(false);
    expect(isBundleOfDay('2026-10', '2026-11-23')).toBe(true);
    expect(isBundleOfDay('2026-11', '2026-11-23')).toBe(false);
  });

  it('reads search job paths', () => {
    expect(searchJobOf('/pagefind/head-2026-11-23')).toEqual({ kind: 'bundle', bundle: 'head-2026-11-23' });
    expect(searchJobOf('/pagefind/2026-10')).toEqual({ kind: 'bundle', bundle: '2026-10' });
    expect(searchJobOf('/pagefind/compact')).toEqual({ kind: 'compact' });
    expect(searchJobOf('/pagefind/all')).toEqual({ kind: 'all' });
    expect(searchJobOf('/pagefind/../etc')).toBeUndefined();
    expect(searchJobOf('/article/2026-10')).toBeUndefined();
  });

  it("cuts today's tier into full blocks of HEAD_MAX, oldest first, with the rest in the head; a new article changes the head only", () => {
    const today = '2026-11-23';
    const day = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        slug: `t${String(i).padStart(3, '0')}`,
        ...at(new Date(Date.UTC(2026, 10, 23, 0, 0, i * 10)).toISOString()),
      }));
    const articles = [...day(HEAD_MAX * 2 + 5), { slug: 'old', ...at('2026-11-02T09:00:00.000Z') }];
    const plan = planSearchBundles([...articles].reverse(), today);
    expect([...plan.keys()]).toEqual([`head-${today}`, `${today}-b001`, `${today}-b000`, '2026-11-22']);
    expect(plan.get(`head-${today}`)).toHaveLength(5);
    expect(plan.get(`${today}-b000`)).toEqual(day(HEAD_MAX).map((a) => a.slug));
    expect([...plan.values()].flat().sort()).toEqual(articles.map((a) => a.slug).sort());
    // One more (dated later): the full blocks are the same, the head grows by one.
    const next = planSearchBundles([...articles, { slug: 'new', ...at('2026-11-23T23:00:00.000Z') }], today);
    expect(next.get(`${today}-b000`)).toEqual(plan.get(`${today}-b000`));
    expect(next.get(`${today}-b001`)).toEqual(plan.get(`${today}-b001`));
    expect(next.get(`head-${today}`)).toEqual([...plan.get(`head-${today}`)!, 'new']);
    // A full head becomes a block when the next article comes in; the head starts again with one.
    const full = planDayTier(day(HEAD_MAX), today);
    expect([...full.keys()]).toEqual([`head-${today}`]);
    const rolled = planDayTier([...day(HEAD_MAX), { slug: 'zz', ...at('2026-11-23T23:59:00.000Z') }], today);
    expect([...rolled.keys()]).toEqual([`head-${today}`, `${today}-b000`]);
    expect(rolled.get(`head-${today}`)!.map((a) => a.slug)).toEqual(['zz']);
    // At any archive size a publish re-indexes at most HEAD_MAX pages of the head.
    for (const n of [1, 30, 270, 2700])
      expect(Math.max(...[...planDayTier(day(n), today).values()].map((b) => b.length))).toBeLessThanOrEqual(HEAD_MAX);
    // The next day, the blocks fold into the month so far with the rest of the head.
    const after = planSearchBundles(articles, '2026-11-24');
    expect([...after.keys()]).toEqual(['2026-11-23']);
    expect(isDayTier(`${today}-b001`, today)).toBe(true);
    expect(isDayTier(`${today}-b001`, '2026-11-24')).toBe(false);
    expect(isBundleOfDay(`${today}-b001`, today)).toBe(true);
    expect(searchJobOf(`/pagefind/${today}-b001`)).toEqual({ kind: 'bundle', bundle: `${today}-b001` });
    expect([`${today}-b000`, '2026-11-22', `head-${today}`, `${today}-b001`].sort(compareBundles)).toEqual([
      `head-${today}`,
      `${today}-b001`,
      `${today}-b000`,
      '2026-11-22',
    ]);
  });
});
