/** The bench's figures: one row per measured figure with its target and verdict, the notes, and the table they print as. */
import os from 'node:os';

export const started = performance.now();
export const say = (line: string) => console.log(`[bench ${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);
const load1 = () => Number(os.loadavg()[0]!.toFixed(2));

type Verdict = 'ok' | 'MISSED' | '';
export type Row = { group: string; figure: string; value: number | string; unit: string; target: string; verdict: Verdict; load: number };
export const rows: Row[] = [];
/** Why a figure is short of its target (Lighthouse's failing audits, retries, request counts), kept in the JSON. */
export const notes: string[] = [];

/** Records one figure; `meets` decides the verdict when there is a target. */
export function record(group: string, figure: string, value: number | string, unit: string, target = '', meets?: boolean): void {
  rows.push({ group, figure, value, unit, target, verdict: meets === undefined ? '' : meets ? 'ok' : 'MISSED', load: load1() });
}

function formatValue(value: number | string): string {
  if (typeof value === 'string') return value;
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  return Math.abs(value) >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(value >= 10 ? 1 : 2);
}

export function printTable(): string {
  const header = ['group', 'figure', 'value', 'unit', 'target', 'verdict', 'load'];
  const lines = rows.map((r) => [r.group, r.figure, formatValue(r.value), r.unit, r.target, r.verdict, r.load.toFixed(2)]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const format = (cells: string[]) => cells.map((c, i) => (i === 2 || i === 6 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ');
  return [format(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(format)].join('\n');
}

export const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
};
