/** The dashboard charts' pure half: the CSV a chart exports, stacking, the newsroom day arithmetic, and the members' charts and money. */
import { describe, expect, it } from 'vitest';
import { addDays, labelDay, stackSeries, sumOf, toCsv } from '../../src/islands/admin/charts/chart-table.ts';
import { membersChart, mrrChart, viewsChart } from '../../src/islands/admin/charts/overview-charts.ts';
import { parseMoney, toMajorText } from '../../src/islands/admin/members-format.ts';
import { formatMoney } from '../../src/lib/money.ts';
import type { AnalyticsSummary } from '../../src/schemas/analytics.ts';
import type { MemberStats } from '../../src/schemas/member-admin.ts';

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

describe('the members charts (issue 48)', () => {
  const stats: MemberStats = {
    timeZone: 'UTC',
    from: '2026-11-26',
    to: '2026-11-27',
    currency: 'usd',
    otherCurrency: 1,
    days: [
      { day: '2026-11-26', members: 10, paying: 2, comped: 1, mrr: 1000 },
      { day: '2026-11-27', members: 12, paying: 3, comped: 0, mrr: 1450 },
    ],
  };

  it('draws members, paid subscribers and comped, with a row per day', () => {
    const chart = membersChart(stats);
    expect(chart.series.map((s) => [s.label, s.values])).toEqual([
      ['Members', [10, 12]],
      ['Paid subscribers', [2, 3]],
      ['Comped', [1, 0]],
    ]);
    expect(chart.table).toEqual({
      columns: ['Day', 'Members', 'Paid subscribers', 'Comped'],
      rows: [
        ['2026-11-26', 10, 2, 1],
        ['2026-11-27', 12, 3, 0],
      ],
    });
    expect(chart.summary).toBe('12 members and 3 paid subscribers on Nov 27 (up 1 since Nov 26), 0 comped.');
  });

  it('draws MRR in dollars, tables it as money, and says what another currency leaves out', () => {
    const chart = mrrChart(stats);
    expect(chart.series[0]).toMatchObject({ label: 'MRR (USD)', values: [10, 14.5] });
    expect(chart.table.rows).toEqual([
      ['2026-11-26', '$10.00'],
      ['2026-11-27', '$14.50'],
    ]);
    expect(chart.summary).toBe(
      'Monthly recurring revenue $14.50 on Nov 27, up $4.50 since Nov 26. 1 paying in another currency not counted.',
    );
  });

  it('shows and reads prices in the major unit of each currency', () => {
    expect(formatMoney(500, 'usd')).toBe('$5.00');
    expect(formatMoney(500, 'jpy')).toBe('¥500');
    expect(toMajorText(4999, 'eur')).toBe('49.99');
    expect(parseMoney('5', 'usd')).toBe(500);
    expect(parseMoney(' 49.9 ', 'eur')).toBe(4990);
    expect(parseMoney('500', 'jpy')).toBe(500);
    for (const bad of ['', '5.001', '-5', '0', 'five', '5,00']) expect(parseMoney(bad, 'usd'), bad).toBeUndefined();
    expect(parseMoney('5.5', 'jpy')).toBeUndefined();
  });
});
