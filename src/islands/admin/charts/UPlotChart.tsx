/** A uPlot canvas sized to its container and coloured from the theme's CSS variables, redrawn when the width or the theme changes. */
import { useEffect, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { stackSeries } from './chart-table.ts';

export type ChartSeries = { label: string; values: number[]; color: string };

export type UPlotChartProps = {
  kind: 'bars' | 'lines';
  /** One label per x position (days, hours, categories). */
  labels: string[];
  series: ChartSeries[];
  stacked?: boolean;
  /** A faded series drawn behind the others (the previous period). */
  behind?: number[];
  height?: number;
  /** A title along the value axis, when its unit is not plain counts ("USD per month"). */
  valueLabel?: string;
};

/** A CSS variable of the page's current theme ("--chart-1"), or the value itself when it is not one. */
function themeColor(value: string): string {
  if (!value.startsWith('--')) return value;
  return getComputedStyle(document.documentElement).getPropertyValue(value).trim() || '#888888';
}

/** Bumps when the site's theme switch changes `data-theme` on <html>, so canvases repaint in the new colours. */
function useThemeVersion(): number {
  const [version, setVersion] = useState(0);
  useEffect(() => {
    const observer = new MutationObserver(() => setVersion((v) => v + 1));
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme', 'class'] });
    return () => observer.disconnect();
  }, []);
  return version;
}

function buildOptions(props: UPlotChartProps, width: number): uPlot.Options {
  const { kind, labels, series, stacked, behind, height = 220, valueLabel } = props;
  const text = themeColor('--text-muted');
  const grid = themeColor('--border');
  const bars = uPlot.paths.bars!({ size: [0.72, 48] });
  const axisValues = (_u: uPlot, splits: number[]) => splits.map((i) => (Number.isInteger(i) ? (labels[i] ?? '') : ''));
  const plotted: uPlot.Series[] = [];
  if (behind)
    plotted.push({
      label: 'Previous period',
      stroke: themeColor('--chart-previous'),
      fill: themeColor('--chart-previous'),
      paths: uPlot.paths.bars!({ size: [0.92, 64] }),
      points: { show: false },
    });
  // Stacked bars: the running sums drawn from the top series down, so each lower one covers the part below it.
  const order = stacked ? [...series.keys()].reverse() : [...series.keys()];
  for (const index of order) {
    const color = themeColor(series[index]!.color);
    plotted.push({
      label: series[index]!.label,
      stroke: color,
      fill: kind === 'bars' ? color : undefined,
      width: kind === 'lines' ? 2 : 0,
      paths: kind === 'bars' ? bars : undefined,
      points: { show: kind === 'lines' && labels.length <= 31 },
    });
  }
  return {
    width,
    height,
    legend: { show: false },
    cursor: { show: false },
    scales: {
      x: { time: false, range: (_u, min, max) => [min - 0.5, max + 0.5] },
      y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.08)] },
    },
    axes: [
      {
        stroke: text,
        grid: { show: false },
        ticks: { stroke: grid },
        values: axisValues,
        space: 48,
        incrs: [1, 2, 3, 4, 6, 7, 12, 14, 24, 30],
      },
      {
        stroke: text,
        grid: { stroke: grid, width: 1 },
        ticks: { stroke: grid },
        size: fitLabels,
        ...(valueLabel ? { label: valueLabel, labelSize: 18, labelFont: '12px system-ui, sans-serif' } : {}),
        incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000],
      },
    ],
    series: [{}, ...plotted],
  };
}

/** The value axis as wide as its longest label (a fixed width cut "12,000" to ",000"). */
function fitLabels(self: uPlot, values: string[] | null, axisIdx: number, cycleNum: number): number {
  const axis = self.axes[axisIdx] as uPlot.Axis & { _size?: number; font?: string | string[] };
  // uPlot asks again after laying out; the first answer stands (as in uPlot's own axis-autosize demo).
  if (cycleNum > 1 && axis._size !== undefined) return axis._size;
  const longest = (values ?? []).reduce((a, b) => (b.length > a.length ? b : a), '');
  self.ctx.font = Array.isArray(axis.font) ? (axis.font[0] ?? '') : (axis.font ?? '');
  const labelWidth = longest ? self.ctx.measureText(longest).width / devicePixelRatio : 0;
  return Math.ceil((axis.ticks?.size ?? 10) + (axis.gap ?? 5) + labelWidth + 4);
}

function buildData(props: UPlotChartProps): uPlot.AlignedData {
  const { labels, series, stacked, behind } = props;
  const x = labels.map((_, i) => i);
  const values = stacked ? stackSeries(series.map((s) => s.values)) : series.map((s) => s.values);
  const order = stacked ? [...values.keys()].reverse() : [...values.keys()];
  return [x, ...(behind ? [behind] : []), ...order.map((i) => values[i]!)];
}

export function UPlotChart(props: UPlotChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  const theme = useThemeVersion();

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const observer = new ResizeObserver(([entry]) => setWidth(Math.floor(entry!.contentRect.width)));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  useEffect(() => {
    const element = box.current;
    if (!element || width === 0) return;
    const chart = new uPlot(buildOptions(props, width), buildData(props), element);
    return () => chart.destroy();
    // The props are plain data rebuilt by the parent on each answer; their JSON is the change that matters.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [width, theme, JSON.stringify(props)]);

  return <div ref={box} className="adm-chart-canvas" aria-hidden="true" />;
}

/** A small line of views, no axes: the Article Manager's and the top list's sparklines. */
export function Sparkline({ values, label }: { values: number[]; label: string }) {
  const box = useRef<HTMLSpanElement>(null);
  const theme = useThemeVersion();
  useEffect(() => {
    const element = box.current;
    if (!element || values.length === 0) return;
    const color = themeColor('--chart-1');
    const chart = new uPlot(
      {
        width: 96,
        height: 28,
        legend: { show: false },
        cursor: { show: false },
        axes: [{ show: false }, { show: false }],
        scales: { x: { time: false }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        series: [{}, { stroke: color, width: 1.5, points: { show: false } }],
      },
      [values.map((_, i) => i), values],
      element,
    );
    return () => chart.destroy();
  }, [theme, values]);
  return (
    <span className="adm-sparkline" role="img" aria-label={label}>
      <span ref={box} aria-hidden="true" />
    </span>
  );
}
