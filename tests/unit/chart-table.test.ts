/** The dashboard charts' pure half: the CSV a chart exports, stacking, and the newsroom day arithmetic. */
import { describe, expect, it } from 'vitest';
import { addDays, labelDay, stackSeries, sumOf, toCsv } from '../../src/islands/admin/charts/chart-table.ts';
import { viewsChart } from '../../src/islands/admin/charts/overview-charts.ts';
import type { AnalyticsSummary } from '../../src/schemas/analytics.ts';

describe('toCsv', () => {
  it('quotes fields with commas, quotes and line breaks, ends lines with CRLF, and defuses formulas', () => {
    const csv = toCsv({
      columns: ['Article', 'Views'],
      rows: [
        ['Rates, again', 12],
        ['The "big" one', 3],
        ['Two\nlines', 0],
        ['=HYPERLINK("x")', -1],
      ],
    });
    expect(csv).toBe('Article,Views\r\n"Rates, again",12\r\n"The ""big"" one",3\r\n"Two\nlines",0\r\n"\'=HYPERLINK(""x"")",-1\r\n');
  });
});

describe('stacking and days', () => {
  it('stacks series into running sums from the first one up', () => {
    expect(
      stackSeries([
        [1, 2],
        [3, 0],
        [0, 5],
      ]),
    ).toEqual([
      [1, 2],
      [4, 2],
      [4, 7],
    ]);
    expect(sumOf([1, 2, 3])).toBe(6);
  });

  it('counts newsroom days across month and year ends and labels them as named', () => {
    expect(addDays('2026-03-01', -1)).toBe('2026-02-28');
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(addDays('2026-11-27', -89)).toBe('2026-08-30');
    expect(labelDay('2026-11-27')).toBe('Nov 27');
  });
});

describe('viewsChart', () => {
  it('builds one series per section, the previous period behind, and a table row per day with its totals', () => {
    const summary: AnalyticsSummary = {
      timeZone: 'UTC',
      from: '2026-11-26',
      to: '2026-11-27',
      days: [
        { day: '2026-11-26', views: 5, sections: { world: 3, '(front)': 2 } },
        { day: '2026-11-27', views: 4, sections: { world: 4 } },
      ],
      previous: [
        { day: '2026-11-24', views: 1 },
        { day: '2026-11-25', views: 2 },
      ],
      totals: { views: 9, previousViews: 3 },
      readingNow: 0,
      devices: { mobile: 0, tablet: 0, desktop: 0 },
      subscribers: [],
      published: [],
    };
    const chart = viewsChart(summary);
    expect(chart.series.map((s) => [s.label, s.values])).toEqual([
      ['Front page', [2, 0]],
      ['World', [3, 4]],
    ]);
    expect(chart.behind).toEqual([1, 2]);
    expect(chart.table.columns).toEqual(['Day', 'Front page', 'World', 'Views', 'Previous period day', 'Previous period views']);
    expect(chart.table.rows).toEqual([
      ['2026-11-26', 2, 3, 5, '2026-11-24', 1],
      ['2026-11-27', 0, 4, 4, '2026-11-25', 2],
    ]);
    expect(chart.summary).toBe('9 views from Nov 26 to Nov 27, up 200% on the 2 days before (3).');
  });
});
