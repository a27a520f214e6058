/** Dates for readers: a stable absolute form for static HTML and a relative form ("3 hours ago") computed in the browser. */

const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['week', 7 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
];

// One instance each: building an Intl formatter per call was a hot spot of rendering every page (issue 36).
const relativeFormat = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
const absoluteFormat = new Intl.DateTimeFormat('en-US', { dateStyle: 'long', timeZone: 'UTC' });

/** "3 hours ago", "yesterday", "just now" for an ISO date relative to `now` (ms). */
export function formatRelativeTime(iso: string, now: number = Date.now()): string {
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return '';
  const seconds = Math.round((time - now) / 1000);
  if (Math.abs(seconds) < 60) return 'just now';
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return relativeFormat.format(Math.trunc(seconds / size), unit);
  }
  return 'just now';
}

/** "October 14, 2025": fixed locale and time zone so the static HTML does not depend on where it was built. */
export function formatAbsoluteDate(iso: string): string {
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return '';
  return absoluteFormat.format(time);
}

/** Replaces the text of every static <time data-relative> outside React islands (those render their own). */
export function refreshRelativeTimes(root: ParentNode = document): void {
  const now = Date.now();
  for (const element of root.querySelectorAll<HTMLTimeElement>('time[data-relative]')) {
    if (element.closest('astro-island')) continue;
    const text = formatRelativeTime(element.dateTime, now);
    if (!text) continue;
    if (!element.title) element.title = formatAbsoluteDate(element.dateTime);
    element.textContent = text;
  }
}
