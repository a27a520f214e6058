/**
 * The search tiers' rules: which bundle an article belongs in on a given day, what a day's plan
 * holds, and that every article sits in exactly one bundle before and after the day rolls over.
 */
import { describe, expect, it } from 'vitest';
import {
  bundleOf,
  bundleRange,
  compareBundles,
  isBundleOfDay,
  planSearchBundles,
  searchJobOf,
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
});
