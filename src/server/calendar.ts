/**
 * The newsroom's calendar in its time zone: the day, hour and minute of an instant (exact in any zone,
 * half-hour ones too), for analytics, the briefing and the backup schedule.
 */

const formats = new Map<string, Intl.DateTimeFormat>();

function formatOf(timeZone: string): Intl.DateTimeFormat {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    formats.set(timeZone, format);
  }
  return format;
}

/** The zone's offset from UTC at an instant, in ms (Asia/Kolkata: +5.5 h). */
export function offsetAt(instantMs: number, timeZone: string): number {
  const parts: Record<string, string> = {};
  for (const part of formatOf(timeZone).formatToParts(instantMs)) parts[part.type] = part.value;
  const local = Date.UTC(+parts.year!, +parts.month! - 1, +parts.day!, +parts.hour!, +parts.minute!, +parts.second!);
  return local - (instantMs - (((instantMs % 1000) + 1000) % 1000));
}

/** `2026-11-27T22:00Z`: how minute and hour buckets name the instant they start at. */
export function isoMinute(instantMs: number): string {
  return `${new Date(instantMs).toISOString().slice(0, 16)}Z`;
}

/** The newsroom day (YYYY-MM-DD) of an instant. */
export function newsroomDay(instantMs: number, timeZone: string): string {
  return new Date(instantMs + offsetAt(instantMs, timeZone)).toISOString().slice(0, 10);
}

/** Where the newsroom's hour holding the instant started (a half-hour zone's hours start at :30 UTC). */
export function hourStartMs(instantMs: number, timeZone: string): number {
  const offset = offsetAt(instantMs, timeZone);
  return Math.floor((instantMs + offset) / 3_600_000) * 3_600_000 - offset;
}

/** The instant a newsroom day starts (its local midnight). */
export function dayStartMs(day: string, timeZone: string): number {
  const midnight = Date.parse(`${day}T00:00:00Z`);
  let start = midnight - offsetAt(midnight, timeZone);
  // Once more with the offset at the guess, which differs from the one at UTC midnight across a DST change.
  start = midnight - offsetAt(start, timeZone);
  return start;
}

export function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** Days from `from` to `to`, both included (inclusive count). */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000) + 1;
}

/** Every day from `from` to `to`, both included. */
export function listDays(from: string, to: string): string[] {
  const count = daysBetween(from, to);
  return Array.from({ length: Math.max(0, count) }, (_, i) => addDays(from, i));
}
