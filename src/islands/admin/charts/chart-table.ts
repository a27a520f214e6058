/** The pure half of the dashboard's charts: the table every chart shows as its text alternative, its CSV, stacking and day labels. */

export type ChartTable = {
  columns: string[];
  rows: (string | number)[][];
};

/** RFC 4180 CSV: a field with a comma, quote or line break is quoted, quotes doubled; a leading formula sign is defused. */
export function toCsv(table: ChartTable): string {
  const field = (value: string | number) => {
    let text = String(value);
    if (typeof value === 'string' && /^[=+\-@]/.test(text)) text = `'${text}`;
    return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  };
  return [table.columns, ...table.rows].map((row) => row.map(field).join(',')).join('\r\n') + '\r\n';
}

/** Running sums from the first series up: what a stacked chart draws, the top series' line being the total. */
export function stackSeries(series: number[][]): number[][] {
  const sums: number[][] = [];
  series.forEach((values, index) => {
    sums.push(values.map((value, i) => value + (index > 0 ? sums[index - 1]![i]! : 0)));
  });
  return sums;
}

const shortDay = new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });

/** "Nov 27" for a newsroom day "2026-11-27" (the day is already the newsroom's, so it is read as UTC to keep it). */
export function labelDay(day: string): string {
  const date = new Date(`${day}T00:00:00Z`);
  return Number.isNaN(date.getTime()) ? day : shortDay.format(date);
}

/** A newsroom day `n` days before `day` (both YYYY-MM-DD). */
export function addDays(day: string, n: number): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + n);
  return date.toISOString().slice(0, 10);
}

/** The sum of a list of numbers. */
export function sumOf(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
