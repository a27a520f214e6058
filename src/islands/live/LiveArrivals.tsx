/**
 * The live article's island (issue 35): polls the page's live.json, holds new updates behind an
 * "N new updates" button in a slot whose size never changes (nothing moves under the reader while
 * they arrive), shows them above the page's own updates when asked, and stops once the coverage ends.
 */
import { useEffect, useRef, useState } from 'react';
import type { LiveFeedUpdate } from '../../schemas/live.ts';
import { LIVE_POLL_MS, newUpdatesLabel, readLiveFeed, unseenUpdates } from '../../lib/live-blog.ts';
import { LiveUpdateItem } from './LiveUpdateItem.tsx';

type Props = {
  /** /article/{slug}/live.json */
  feedUrl: string;
  /** The updates the page was rendered with (the newest ones the feed can carry). */
  knownIds: string[];
};

export default function LiveArrivals({ feedUrl, knownIds }: Props) {
  const known = useRef(new Set(knownIds));
  const [pending, setPending] = useState<LiveFeedUpdate[]>([]);
  const [shown, setShown] = useState<LiveFeedUpdate[]>([]);
  const [ended, setEnded] = useState(false);
  const list = useRef<HTMLOListElement>(null);
  const revealed = useRef(false);

  useEffect(() => {
    if (ended) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const poll = async () => {
      // A hidden tab asks nothing; it catches up on its first poll once shown again.
      if (document.visibilityState === 'visible') {
        try {
          // A static file, not /api: the browser revalidates it (ETag) so a CDN's short cache is all it costs.
          const response = await fetch(feedUrl, { cache: 'no-cache', headers: { Accept: 'application/json' } });
          const feed = response.ok ? readLiveFeed(await response.json()) : undefined;
          if (feed) {
            const fresh = unseenUpdates(feed, known.current);
            for (const update of fresh) known.current.add(update.id);
            if (fresh.length > 0) setPending((current) => [...fresh, ...current]);
            if (feed.status === 'ended') {
              setEnded(true);
              return;
            }
          }
        } catch {
          // Offline or a file being replaced: the next poll tries again.
        }
      }
      if (!stopped) timer = setTimeout(() => void poll(), LIVE_POLL_MS);
    };
    timer = setTimeout(() => void poll(), LIVE_POLL_MS);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [feedUrl, ended]);

  useEffect(() => {
    if (!revealed.current) return;
    revealed.current = false;
    // The reader asked for them: take them to the newest, for keyboards and screen readers too.
    list.current?.querySelector<HTMLElement>('li')?.focus();
  }, [shown]);

  const reveal = () => {
    revealed.current = true;
    setShown((current) => [...pending, ...current]);
    setPending([]);
  };

  return (
    <div className="live-arrivals">
      <div className="live-new-slot" aria-live="polite" data-testid="live-new-slot">
        {pending.length > 0 ? (
          <button type="button" className="btn btn-primary live-new-button" onClick={reveal} data-testid="live-new-button">
            {newUpdatesLabel(pending.length)}
          </button>
        ) : ended ? (
          <p className="live-ended-note" data-testid="live-ended-note">
            The live coverage has ended.
          </p>
        ) : null}
      </div>
      {shown.length > 0 && (
        <ol className="live-updates" ref={list} aria-label="New updates" data-testid="live-arrived">
          {shown.map((update) => (
            <LiveUpdateItem key={update.id} update={update} />
          ))}
        </ol>
      )}
    </div>
  );
}
