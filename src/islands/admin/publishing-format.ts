/** Times in the Publishing panel: short and relative ("12 s ago", "in 4 s"), since its figures change by the second. */

/** "12 s ago", "5 min ago", "3 h ago", "2 d ago"; for a time ahead, "in 12 s"; within a second, "just now" (or "now" ahead). */
export function formatElapsed(iso: string, now: number = Date.now()): string {
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return '';
  const ahead = time > now;
  const size = Math.round(Math.abs(now - time) / 1000);
  if (size === 0) return ahead ? 'now' : 'just now';
  const amount =
    size < 60
      ? `${size} s`
      : size < 3600
        ? `${Math.floor(size / 60)} min`
        : size < 86_400
          ? `${Math.floor(size / 3600)} h`
          : `${Math.floor(size / 86_400)} d`;
  return ahead ? `in ${amount}` : `${amount} ago`;
}

/** "12 ms", "1.4 s": how long a render or a search build took. */
export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
