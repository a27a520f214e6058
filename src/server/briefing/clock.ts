/** The briefing's local calendar: the day, weekday and minute of an instant in BRIEFING_TZ. */

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

const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

export function localTime(instant: Date, timeZone: string): LocalTime {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      weekday: 'short',
    })
      .formatToParts(instant)
      .map((p) => [p.type, p.value]),
  );
  const label = new Intl.DateTimeFormat('en-GB', { timeZone, weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' }).format(
    instant,
  );
  return {
    date: `${parts.year}-${parts.month}-${parts.day}`,
    weekday: WEEKDAYS.indexOf(parts.weekday!) + 1,
    minutes: Number(parts.hour) * 60 + Number(parts.minute),
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
