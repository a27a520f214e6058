/** One live update as readers see it: drawn by the article page (static) and by the island for updates that arrive later. */
import type { LiveFeedUpdate } from '../../schemas/live.ts';
import { formatUpdateTime, updateAnchor } from '../../lib/live-blog.ts';

export function LiveUpdateItem({ update }: { update: LiveFeedUpdate }) {
  return (
    <li
      id={updateAnchor(update.id)}
      className={update.isBreaking ? 'live-update live-update-breaking' : 'live-update'}
      data-testid="live-update"
      data-update-id={update.id}
      tabIndex={-1}
    >
      <p className="live-update-meta">
        <time dateTime={update.at}>{formatUpdateTime(update.at)}</time>
        {update.isBreaking && <span className="badge badge-breaking">Breaking</span>}
      </p>
      {/* Sanitised on the server with the article bodies' allow-list before it was stored. */}
      <div className="live-update-body" dangerouslySetInnerHTML={{ __html: update.html }} />
      {update.image && (
        <figure className="live-update-figure">
          <img src={update.image} alt={update.imageAlt ?? ''} loading="lazy" decoding="async" width={1200} height={675} />
        </figure>
      )}
    </li>
  );
}
