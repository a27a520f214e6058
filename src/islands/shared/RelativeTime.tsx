/** A <time> that shows the absolute date on the server and the relative age once mounted in the browser. */
import { useEffect, useState } from 'react';
import { formatAbsoluteDate, formatRelativeTime } from './relative-time.ts';

export function RelativeTime({ iso, className }: { iso: string; className?: string }) {
  const [now, setNow] = useState<number | undefined>(undefined);
  useEffect(() => setNow(Date.now()), []);
  const absolute = formatAbsoluteDate(iso);
  return (
    <time dateTime={iso} className={className} title={absolute} data-relative="">
      {now === undefined ? absolute : formatRelativeTime(iso, now)}
    </time>
  );
}
