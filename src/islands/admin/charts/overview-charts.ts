/** The Overview's chart data: an analytics answer turned into the series one chart draws and the table that is its text alternative. */
import { labelSection } from '../../../lib/sections.ts';
import type { MemberStats } from '../../../schemas/member-admin.ts';
import type { AnalyticsReferrers, AnalyticsSummary, AnalyticsTop } from './analytics-contract.ts';
import { currencyDecimals, formatMoney } from '../../../lib/money.ts';
import { labelDay, sumOf, type ChartTable } from './chart-table.ts';
import type { ChartSeries } from './UPlotChart.tsx';

/** A section key of the views chart: the front page is counted apart from the sections (`(front)`). */
function labelViewSection(section: string): string {
  return section === '(front)' ? 'Front page' : labelSection(section);
}

/** Eight theme colours (admin.css, light and dark), used in order; a ninth series reuses the first. */
export function chartColor(index: number): string {
  return `--chart-${(index % 8) + 1}`;
}

function percent(part: number, whole: number): string {
  return whole === 0 ? '0%' : `${Math.round((part / whole) * 100)}%`;
}

/** Views per day stacked by section, with the previous period behind. */
export function viewsChart(summary: AnalyticsSummary) {
  const sections = [...new Set(summary.days.flatMap((d) => Object.keys(d.sections)))].sort();
  const series: ChartSeries[] = sections.map((section, index) => ({
    label: labelViewSection(section),
    values: summary.days.map((d) => d.sections[section] ?? 0),
    color: chartColor(index),
  }));
  const table: ChartTable = {
    columns: ['Day', ...series.map((s) => s.label), 'Views', 'Previous period day', 'Previous period views'],
    rows: summary.days.map((d, i) => [
      d.day,
      ...sections.map((section) => d.sections[section] ?? 0),
      d.views,
      summary.previous[i]?.day ?? '',
      summary.previous[i]?.views ?? 0,
    ]),
  };
  const { views, previousViews } = summary.totals;
  const change =
    previousViews === 0 ? '' : `, ${views >= previousViews ? 'up' : 'down'} ${percent(Math.abs(views - previousViews), previousViews)}`;
  const summaryText =
    `${views.toLocaleString('en-US')} views from ${labelDay(summary.from)} to ${labelDay(summary.to)}` +
    `${change} on the ${summary.days.length} days before (${previousViews.toLocaleString('en-US')}).`;
  return {
    labels: summary.days.map((d) => labelDay(d.day)),
    series,
    behind: summary.days.map((_, i) => summary.previous[i]?.views ?? 0),
    table,
    summary: summaryText,
  };
}

/** Confirmed and unsubscribed subscribers at the end of each day. */
export function subscribersChart(summary: AnalyticsSummary) {
  const rows = summary.subscribers;
  const last = rows.at(-1);
  return {
    labels: rows.map((r) => labelDay(r.day)),
    series: [
      { label: 'Confirmed', values: rows.map((r) => r.confirmed), color: chartColor(0) },
      { label: 'Unsubscribed', values: rows.map((r) => r.unsubscribed), color: chartColor(3) },
    ],
    table: { columns: ['Day', 'Confirmed', 'Unsubscribed'], rows: rows.map((r) => [r.day, r.confirmed, r.unsubscribed]) },
    summary: last
      ? `${last.confirmed.toLocaleString('en-US')} confirmed and ${last.unsubscribed.toLocaleString('en-US')} unsubscribed on ${labelDay(last.day)}` +
        ` (${(last.confirmed - (rows[0]?.confirmed ?? 0)).toLocaleString('en-US')} more confirmed than on ${labelDay(rows[0]!.day)}).`
      : 'No subscribers in this period.',
  };
}

/** Articles published per day: editorial, then each feed. */
export function publishedChart(summary: AnalyticsSummary) {
  const feeds = [...new Set(summary.published.flatMap((d) => Object.keys(d.feeds)))].sort();
  const series: ChartSeries[] = [
    { label: 'Editorial', values: summary.published.map((d) => d.editorial), color: chartColor(0) },
    ...feeds.map((feed, index) => ({
      label: feed,
      values: summary.published.map((d) => d.feeds[feed] ?? 0),
      color: chartColor(index + 1),
    })),
  ];
  const editorial = sumOf(series[0]!.values);
  const fromFeeds = sumOf(series.slice(1).flatMap((s) => s.values));
  return {
    labels: summary.published.map((d) => labelDay(d.day)),
    series,
    table: {
      columns: ['Day', ...series.map((s) => s.label), 'Total'],
      rows: summary.published.map((d) => {
        const perFeed = feeds.map((feed) => d.feeds[feed] ?? 0);
        return [d.day, d.editorial, ...perFeed, d.editorial + sumOf(perFeed)];
      }),
    },
    summary: `${(editorial + fromFeeds).toLocaleString('en-US')} articles published: ${editorial.toLocaleString('en-US')} editorial, ${fromFeeds.toLocaleString('en-US')} from ${feeds.length} feed${feeds.length === 1 ? '' : 's'}.`,
  };
}

const DEVICES = [
  ['mobile', 'Mobile'],
  ['tablet', 'Tablet'],
  ['desktop', 'Desktop'],
] as const;

export function devicesChart(summary: AnalyticsSummary) {
  const total = sumOf(DEVICES.map(([key]) => summary.devices[key]));
  return {
    labels: DEVICES.map(([, label]) => label),
    series: [{ label: 'Views', values: DEVICES.map(([key]) => summary.devices[key]), color: chartColor(1) }],
    table: {
      columns: ['Device', 'Views', 'Share'],
      rows: DEVICES.map(([key, label]) => [label, summary.devices[key], percent(summary.devices[key], total)]),
    },
    summary:
      total === 0
        ? 'No views in this period.'
        : DEVICES.map(([key, label]) => `${label} ${percent(summary.devices[key], total)}`).join(', ') + '.',
  };
}

const KINDS = [
  ['search', 'Search'],
  ['social', 'Social'],
  ['direct', 'Direct'],
  ['newsletter', 'Newsletter'],
  ['other', 'Other sites'],
] as const;

export function referrersChart(referrers: AnalyticsReferrers) {
  const total = sumOf(KINDS.map(([key]) => referrers.kinds[key]));
  const top = referrers.items[0];
  return {
    labels: KINDS.map(([, label]) => label),
    series: [{ label: 'Views', values: KINDS.map(([key]) => referrers.kinds[key]), color: chartColor(2) }],
    table: {
      columns: ['Referrer', 'Kind', 'Views'],
      rows: referrers.items.map((item) => [item.host, KINDS.find(([key]) => key === item.kind)?.[1] ?? item.kind, item.views]),
    },
    summary:
      total === 0
        ? 'No views in this period.'
        : `${KINDS.map(([key, label]) => `${label} ${percent(referrers.kinds[key], total)}`).join(', ')}.` +
          (top ? ` Top referrer: ${top.host} (${top.views.toLocaleString('en-US')} views).` : ''),
  };
}

export function topTable(top: AnalyticsTop): ChartTable {
  return {
    columns: ['Article', 'Section', 'Views', top.period === 'today' ? 'Views per hour today' : 'Views per day'],
    rows: top.items.map((item) => [item.title, labelSection(item.section), item.views, item.spark.join(' ')]),
  };
}

/** Members (issue 48) at the end of each day: all of them, those paying a subscription, and those comped. */
export function membersChart(stats: MemberStats) {
  const rows = stats.days;
  const first = rows[0];
  const last = rows.at(-1);
  const count = (n: number) => n.toLocaleString('en-US');
  return {
    labels: rows.map((r) => labelDay(r.day)),
    series: [
      { label: 'Members', values: rows.map((r) => r.members), color: chartColor(0) },
      { label: 'Paid subscribers', values: rows.map((r) => r.paying), color: chartColor(1) },
      { label: 'Comped', values: rows.map((r) => r.comped), color: chartColor(4) },
    ],
    table: {
      columns: ['Day', 'Members', 'Paid subscribers', 'Comped'],
      rows: rows.map((r) => [r.day, r.members, r.paying, r.comped]),
    },
    summary:
      first && last
        ? `${count(last.members)} members and ${count(last.paying)} paid subscribers on ${labelDay(last.day)}` +
          ` (${last.paying >= first.paying ? 'up' : 'down'} ${count(Math.abs(last.paying - first.paying))} since ${labelDay(first.day)}),` +
          ` ${count(last.comped)} comped.`
        : 'No members in this period.',
  };
}

/** Monthly recurring revenue at the end of each day, in the plans' currency's major unit (dollars, not cents). */
export function mrrChart(stats: MemberStats) {
  const rows = stats.days;
  const code = stats.currency.toUpperCase();
  const scale = 10 ** currencyDecimals(stats.currency);
  const first = rows[0];
  const last = rows.at(-1);
  const money = (minor: number) => formatMoney(minor, stats.currency);
  const others = stats.otherCurrency > 0 ? ` ${stats.otherCurrency} paying in another currency not counted.` : '';
  return {
    labels: rows.map((r) => labelDay(r.day)),
    series: [{ label: `MRR (${code})`, values: rows.map((r) => r.mrr / scale), color: chartColor(2) }],
    table: {
      columns: ['Day', `MRR (${code})`],
      rows: rows.map((r) => [r.day, money(r.mrr)]),
    },
    summary:
      first && last
        ? `Monthly recurring revenue ${money(last.mrr)} on ${labelDay(last.day)}, ${last.mrr >= first.mrr ? 'up' : 'down'} ` +
          `${money(Math.abs(last.mrr - first.mrr))} since ${labelDay(first.day)}.${others}`
        : 'No revenue in this period.',
  };
}
