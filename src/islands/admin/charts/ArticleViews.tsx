/**
 * One article's figures: its views sparkline in the Article Manager, and the panel of its totals and
 * views by hour since publication (in the Article Manager and the editor).
 */
import { useEffect, useId, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { QueryFailure, Spinner, toastFailure } from '../AdminUi.tsx';
import { analyticsKeys, type AnalyticsArticle } from './analytics-contract.ts';
import { ChartFigure } from './ChartFigure.tsx';
import { chartColor } from './overview-charts.ts';
import { Sparkline, UPlotChart } from './UPlotChart.tsx';

const hourLabel = new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', hour: 'numeric' });
const dayLabel = new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric' });

/** The panel: the article's totals and its chart by hour (by day once it is older than two weeks), with the table and CSV. */
export function ArticleViewsPanel({ articleId }: { articleId: string }) {
  const figures = useQuery<AnalyticsArticle>({ queryKey: analyticsKeys.article(articleId) });
  useEffect(() => {
    if (figures.isError) toastFailure('Failed to load the article’s views.');
  }, [figures.isError]);
  if (figures.isPending) return <Spinner label="Loading the article's views" />;
  if (figures.isError) return <QueryFailure what="the article's views" onRetry={() => void figures.refetch()} />;
  const { points, totals, granularity } = figures.data;
  const label = granularity === 'hour' ? hourLabel : dayLabel;
  const unit = granularity === 'hour' ? 'hour' : 'day';
  const peak = points.reduce<{ t: string; views: number } | undefined>((best, p) => (!best || p.views > best.views ? p : best), undefined);
  return (
    <div className="adm-stack" data-testid="article-views-panel">
      <dl className="adm-facts" aria-label="Article totals">
        <div>
          <dt>Views</dt>
          <dd data-testid="article-total-views">{totals.views.toLocaleString('en-US')}</dd>
        </div>
        <div>
          <dt>Likes</dt>
          <dd>{totals.likes.toLocaleString('en-US')}</dd>
        </div>
        <div>
          <dt>Dislikes</dt>
          <dd>{totals.dislikes.toLocaleString('en-US')}</dd>
        </div>
        <div>
          <dt>Comments</dt>
          <dd data-testid="article-total-comments">{totals.comments.toLocaleString('en-US')}</dd>
        </div>
      </dl>
      <ChartFigure
        title={`Views by ${unit} since publication`}
        summary={
          peak && peak.views > 0
            ? `${totals.views.toLocaleString('en-US')} views; the most in one ${unit} was ${peak.views.toLocaleString('en-US')}, ${label.format(new Date(peak.t))}.`
            : 'No views yet.'
        }
        table={{ columns: [granularity === 'hour' ? 'Hour (UTC)' : 'Day', 'Views'], rows: points.map((p) => [p.t, p.views]) }}
        fileName={`article-${articleId}-views-by-${unit}`}
        testId="chart-article"
      >
        <UPlotChart
          kind="lines"
          labels={points.map((p) => label.format(new Date(p.t)))}
          series={[{ label: 'Views', values: points.map((p) => p.views), color: chartColor(0) }]}
        />
      </ChartFigure>
    </div>
  );
}

/** The Article Manager card's line: the views sparkline of the last days and a button opening the panel. */
export function ArticleFiguresLine({
  articleId,
  title,
  spark,
  days,
}: {
  articleId: string;
  title: string;
  spark: number[] | undefined;
  days: number;
}) {
  const [open, setOpen] = useState(false);
  const panelId = useId();
  return (
    <>
      <div className="adm-article-figures">
        {spark && <Sparkline values={spark} label={`Views of ${title} per day, last ${days} days: ${spark.join(', ')}`} />}
        <button
          type="button"
          className="adm-btn adm-btn-outline adm-btn-sm"
          aria-expanded={open}
          aria-controls={panelId}
          onClick={() => setOpen((o) => !o)}
        >
          {open ? 'Hide views chart' : 'Views chart'}
        </button>
      </div>
      <div id={panelId} hidden={!open}>
        {open && <ArticleViewsPanel articleId={articleId} />}
      </div>
    </>
  );
}
