/** A <time> that shows the absolute date on the server and the relative age once mounted in the browser. */
import { useState, useSyncExternalStore } from 'react';
import { formatAbsoluteDate, formatRelativeTime } from '../../lib/relative-time.ts';

// Whether this render runs in the browser after hydration: false on the server and in the hydrating render (so it matches the HTML).
const subscribe = () => () => {};
const inBrowser = () => true;
const onServer = () => false;

export function RelativeTime({ iso, className }: { iso: string; className?: string }) {
  const mounted = useSyncExternalStore(subscribe, inBrowser, onServer);
  // Read once per <time>: the age is as of when it appeared, like the static HTML's refresh on load.
  const [now] = useState(() => Date.now());
  const absolute = formatAbsoluteDate(iso);
  return (
    <time dateTime={iso} className={className} title={absolute} data-relative="">
      {mounted ? formatRelativeTime(iso, now) : absolute}
    </time>
  );
}
