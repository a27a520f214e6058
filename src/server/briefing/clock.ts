/** The briefing's local calendar: the day, weekday and minute of an instant in BRIEFING_TZ. */
import { offsetAt } from '../calendar.ts';

export type LocalTime = {
  /** YYYY-MM-DD in the zone: the key that makes a briefing once a day. */
  date: string;
  /** 1 = Monday ... 7 = Sunday. */
  weekday: number;
  /** Minutes since local midnight. */
  minutes: number;
  /** e.g. "Monday, 23 November 2026". */
  label: string;
};

export function localTime(instant: Date, timeZone: string): LocalTime {
  // The zone's wall clock as a UTC date: its fields are the local ones.
  const local = new Date(instant.getTime() + offsetAt(instant.getTime(), timeZone));
  const label = new Intl.DateTimeFormat('en-GB', { timeZone, weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' }).format(
    instant,
  );
  return {
    date: local.toISOString().slice(0, 10),
    weekday: ((local.getUTCDay() + 6) % 7) + 1,
    minutes: local.getUTCHours() * 60 + local.getUTCMinutes(),
    label,
  };
}

/** "07:00" -> 420. */
export function minutesOf(time: string): number {
  const [hours, minutes] = time.split(':').map(Number);
  return hours! * 60 + minutes!;
}

/** Whether the scheduled briefing is due at this local time: a weekday, at or after BRIEFING_TIME. */
export function isBriefingDue(local: LocalTime, briefingTime: string): boolean {
  return local.weekday <= 5 && local.minutes >= minutesOf(briefingTime);
}
