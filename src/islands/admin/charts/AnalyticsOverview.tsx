/**
 * The Overview's analytics: reading now, views per day by section, top articles, referrers, devices, subscribers, articles published,
 * and (for roles that read members) members, paid subscribers and monthly recurring revenue.
 */
import { useEffect, useState, type ReactNode } from 'react';
import { keepPreviousData, useQuery, type UseQueryResult } from '@tanstack/react-query';
import { QueryFailure, Spinner, toastFailure } from '../AdminUi.tsx';
import { analyticsKeys, type AnalyticsReferrers, type AnalyticsSummary, type AnalyticsTop, type TopPeriod } from './analytics-contract.ts';
import { addDays } from './chart-table.ts';
import { ChartFigure } from './ChartFigure.tsx';
import {
  devicesChart,
  membersChart,
  mrrChart,
  publishedChart,
  referrersChart,
  subscribersChart,
  topTable,
  viewsChart,
} from './overview-charts.ts';
import { Sparkline, UPlotChart } from './UPlotChart.tsx';
import { adminKeys } from '../admin-queries.ts';
import { usePermissions } from '../../auth/use-permissions.ts';
import type { MemberStats } from '../../../schemas/member-admin.ts';

const RANGES = [7, 30, 90] as const;
type Range = (typeof RANGES)[number];
/** "Reading now" is the last 30 minutes: asked again every minute while the Overview is open. */
const READING_NOW_REFRESH_MS = 60_000;

/** A failed analytics query: one toast (as the other tabs' failures); each chart of it shows the retry block in place. */
function useFailureToast(query: UseQueryResult<unknown>, what: string): void {
  useEffect(() => {
    if (query.isError) toastFailure(`Failed to load ${what}.`);
  }, [query.isError, what]);
}

function Pending<T>({ query, what, children }: { query: UseQueryResult<T>; what: string; children: (data: T) => ReactNode }) {
  if (query.isPending) return <Spinner label={`Loading ${what}`} />;
  if (query.isError) return <QueryFailure what={what} onRetry={() => void query.refetch()} />;
  return <>{children(query.data)}</>;
}

function Switch<T extends string | number>({
  label,
  options,
  value,
  onChange,
}: {
  label: string;
  options: readonly (readonly [T, string])[];
  value: T;
  onChange: (value: T) => void;
}) {
  return (
    <div className="adm-chart-switch" role="group" aria-label={label}>
      {options.map(([option, text]) => (
        <button
          key={option}
          type="button"
          className={`adm-btn adm-btn-sm ${option === value ? 'adm-btn-primary' : 'adm-btn-outline'}`}
          aria-pressed={option === value}
          onClick={() => onChange(option)}
        >
          {text}
        </button>
      ))}
    </div>
  );
}

export function AnalyticsOverview() {
  const { can } = usePermissions();
  const [range, setRange] = useState<Range>(30);
  // The server's default range (30 days to the newsroom's today) tells the dashboard which day "today" is.
  const base = useQuery<AnalyticsSummary>({ queryKey: ['/api/analytics/summary', {}], refetchInterval: READING_NOW_REFRESH_MS });
  const to = base.data?.to;
  const from = to ? addDays(to, -(range - 1)) : undefined;
  const ranged = useQuery<AnalyticsSummary>({
    queryKey: analyticsKeys.summary(from ?? '', to ?? ''),
    enabled: range !== 30 && to !== undefined,
    // The charts stay in place (their open tables and the focused switch too) while another period loads.
    placeholderData: (previous) => previous ?? base.data,
  });
  const summary = range === 30 ? base : ranged;
  const referrers = useQuery<AnalyticsReferrers>({
    queryKey: analyticsKeys.referrers(from ?? '', to ?? ''),
    enabled: to !== undefined,
    placeholderData: keepPreviousData,
  });
  useFailureToast(summary, 'the readers figures');
  useFailureToast(referrers, 'the referrers');

  const readers = (
    <section className="adm-stack" aria-labelledby="analytics-heading">
      <div className="adm-toolbar">
        <h2 id="analytics-heading" className="adm-card-title">
          Readers
        </h2>
        <Switch label="Period" options={RANGES.map((days) => [days, `${days} days`] as const)} value={range} onChange={setRange} />
      </div>
      <div className="adm-chart-grid">
        <div className="adm-card adm-stat" data-testid="reading-now">
          <span className="adm-stat-label">Reading now</span>
          <span className="adm-stat-value">{base.data ? base.data.readingNow.toLocaleString('en-US') : base.isError ? '–' : '…'}</span>
          <span className="adm-muted">views in the last 30 minutes</span>
        </div>
      </div>
      <Pending query={summary} what="views">
        {(data) => {
          const views = viewsChart(data);
          return (
            <ChartFigure
              title="Views per day"
              summary={views.summary}
              table={views.table}
              fileName={`views-${data.from}-${data.to}`}
              testId="chart-views"
              legend={[
                ...views.series.map((s) => ({ label: s.label, color: s.color })),
                { label: 'Previous period', color: '--chart-previous' },
              ]}
            >
              <UPlotChart kind="bars" stacked labels={views.labels} series={views.series} behind={views.behind} />
            </ChartFigure>
          );
        }}
      </Pending>
      <TopArticles />
      <div className="adm-chart-grid">
        <Pending query={referrers} what="referrers">
          {(data) => {
            const chart = referrersChart(data);
            return (
              <ChartFigure
                title="Where readers came from"
                summary={chart.summary}
                table={chart.table}
                fileName={`referrers-${data.from}-${data.to}`}
                testId="chart-referrers"
              >
                <UPlotChart kind="bars" labels={chart.labels} series={chart.series} height={180} />
                <ol className="adm-chart-hosts">
                  {data.items.slice(0, 5).map((item) => (
                    <li key={item.host}>
                      <span className="adm-break">{item.host}</span> <span className="adm-muted">{item.views.toLocaleString('en-US')}</span>
                    </li>
                  ))}
                </ol>
              </ChartFigure>
            );
          }}
        </Pending>
        <Pending query={summary} what="devices">
          {(data) => {
            const chart = devicesChart(data);
            return (
              <ChartFigure
                title="Devices"
                summary={chart.summary}
                table={chart.table}
                fileName={`devices-${data.from}-${data.to}`}
                testId="chart-devices"
              >
                <UPlotChart kind="bars" labels={chart.labels} series={chart.series} height={180} />
              </ChartFigure>
            );
          }}
        </Pending>
      </div>
      <Pending query={summary} what="subscribers">
        {(data) => {
          const chart = subscribersChart(data);
          return (
            <ChartFigure
              title="Newsletter subscribers"
              summary={chart.summary}
              table={chart.table}
              fileName={`subscribers-${data.from}-${data.to}`}
              testId="chart-subscribers"
              legend={chart.series.map((s) => ({ label: s.label, color: s.color }))}
            >
              <UPlotChart kind="lines" labels={chart.labels} series={chart.series} />
            </ChartFigure>
          );
        }}
      </Pending>
      <Pending query={summary} what="articles published">
        {(data) => {
          const chart = publishedChart(data);
          return (
            <ChartFigure
              title="Articles published per day"
              summary={chart.summary}
              table={chart.table}
              fileName={`published-${data.from}-${data.to}`}
              testId="chart-published"
              legend={chart.series.map((s) => ({ label: s.label, color: s.color }))}
            >
              <UPlotChart kind="bars" stacked labels={chart.labels} series={chart.series} />
            </ChartFigure>
          );
        }}
      </Pending>
    </section>
  );
  // The members' figures follow the Readers' period switch (one range for the whole Overview).
  return (
    <>
      {readers}
      {can('member.read') && from !== undefined && to !== undefined && <MemberFigures from={from} to={to} />}
    </>
  );
}

/** Members (issue 48) over the Readers' period: members and paid subscribers, and the monthly recurring revenue. */
function MemberFigures({ from, to }: { from: string; to: string }) {
  const stats = useQuery<MemberStats>({ queryKey: adminKeys.memberStats(from, to), placeholderData: keepPreviousData });
  useFailureToast(stats, 'the member figures');
  return (
    <section className="adm-stack" aria-labelledby="members-heading" data-testid="member-figures">
      <h2 id="members-heading" className="adm-card-title">
        Members
      </h2>
      <div className="adm-chart-grid">
        <Pending query={stats} what="members">
          {(data) => {
            const chart = membersChart(data);
            return (
              <ChartFigure
                title="Members and paid subscribers"
                summary={chart.summary}
                table={chart.table}
                fileName={`members-${data.from}-${data.to}`}
                testId="chart-members"
                legend={chart.series.map((s) => ({ label: s.label, color: s.color }))}
              >
                <UPlotChart kind="lines" labels={chart.labels} series={chart.series} />
              </ChartFigure>
            );
          }}
        </Pending>
        <Pending query={stats} what="monthly recurring revenue">
          {(data) => {
            const chart = mrrChart(data);
            return (
              <ChartFigure
                title="Monthly recurring revenue"
                summary={chart.summary}
                table={chart.table}
                fileName={`mrr-${data.from}-${data.to}`}
                testId="chart-mrr"
              >
                <UPlotChart
                  kind="lines"
                  labels={chart.labels}
                  series={chart.series}
                  valueLabel={`${data.currency.toUpperCase()} per month`}
                />
              </ChartFigure>
            );
          }}
        </Pending>
      </div>
    </section>
  );
}

const PERIODS = [
  ['today', 'Today'],
  ['7d', '7 days'],
] as const;

/** The ten most read articles of today or the last 7 days, each with its sparkline. */
export function TopArticles() {
  const [period, setPeriod] = useState<TopPeriod>('today');
  const top = useQuery<AnalyticsTop>({ queryKey: analyticsKeys.top(period), placeholderData: keepPreviousData });
  useFailureToast(top, 'the top articles');
  return (
    <Pending query={top} what="top articles">
      {(data) => (
        <ChartFigure
          title="Top articles"
          summary={
            data.items.length === 0
              ? 'No views yet in this period.'
              : `Most read: ${data.items[0]!.title} (${data.items[0]!.views.toLocaleString('en-US')} views).`
          }
          table={topTable(data)}
          fileName={`top-articles-${period}`}
          testId="chart-top"
          controls={<Switch label="Top articles period" options={PERIODS} value={period} onChange={setPeriod} />}
        >
          <ol className="adm-top-list">
            {data.items.map((item) => (
              <li key={item.id}>
                <a href={`/admin/editor/${item.id}`} className="adm-break">
                  {item.title}
                </a>
                <Sparkline
                  values={item.spark}
                  label={`${item.title}: ${period === 'today' ? 'views per hour today' : 'views per day'}, ${item.spark.join(', ')}`}
                />
                <span className="adm-top-views">{item.views.toLocaleString('en-US')}</span>
              </li>
            ))}
          </ol>
        </ChartFigure>
      )}
    </Pending>
  );
}
