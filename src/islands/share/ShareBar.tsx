/** The article's share block: Facebook, LinkedIn and TikTok popups, and copy link with a check icon for 2 seconds. */
import { useEffect, useRef, useState } from 'react';
import { toast } from '../toast/toast-store.ts';
import { buildShareUrl, openSharePopup, SHARE_NETWORKS, type ShareNetwork } from './share-links.ts';

/** How long the copied state shows (docs/product.md, Interface rules: timings and sizes). */
export const COPIED_MS = 2000;

const ICONS: Record<ShareNetwork, string> = {
  facebook: 'M14 8.5V6.8c0-.8.5-1 .9-1H17V2.1L14.1 2C10.9 2 10.2 4.4 10.2 6v2.5H8v3.7h2.2V22H14v-9.8h3l.4-3.7z',
  linkedin:
    'M4.98 3.5a2.5 2.5 0 1 1 0 5 2.5 2.5 0 0 1 0-5zM3 9.75h4V21H3zM9.5 9.75h3.8v1.6h.06c.53-1 1.83-2.05 3.77-2.05 4.03 0 4.77 2.65 4.77 6.1V21h-4v-5c0-1.2 0-2.75-1.67-2.75s-1.93 1.3-1.93 2.65V21h-4z',
  tiktok:
    'M16.6 5.8A4.3 4.3 0 0 1 15.5 3h-3.2v12.4a2.6 2.6 0 1 1-2.6-2.6c.3 0 .5 0 .8.1V9.6a5.9 5.9 0 1 0 5 5.8V9.1a7.4 7.4 0 0 0 4.3 1.4V7.3a4.3 4.3 0 0 1-3.2-1.5z',
};

export default function ShareBar({ url, title }: { url: string; title: string }) {
  const [copied, setCopied] = useState(false);
  const timer = useRef<number | undefined>(undefined);
  useEffect(() => () => window.clearTimeout(timer.current), []);

  const copyLink = async () => {
    try {
      await navigator.clipboard.writeText(url);
      setCopied(true);
      window.clearTimeout(timer.current);
      timer.current = window.setTimeout(() => setCopied(false), COPIED_MS);
      toast({ title: 'Link copied!', description: 'Article link has been copied to clipboard.' });
    } catch {
      toast({ title: 'Failed to copy', description: 'Please try again.', variant: 'destructive' });
    }
  };

  return (
    <div className="share-bar" role="group" aria-label={`Share “${title}”`} data-testid="share-bar">
      <span className="share-label">Share</span>
      {SHARE_NETWORKS.map(({ network, label }) => (
        <button
          key={network}
          type="button"
          className="share-btn"
          aria-label={`Share on ${label}`}
          title={`Share on ${label}`}
          onClick={() => openSharePopup(buildShareUrl(network, url))}
        >
          <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true">
            <path d={ICONS[network]} fill="currentColor" />
          </svg>
        </button>
      ))}
      <button
        type="button"
        className="share-btn"
        aria-label={copied ? 'Link copied' : 'Copy link'}
        title="Copy link"
        onClick={copyLink}
        data-copied={copied}
      >
        {copied ? (
          <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" data-testid="copy-check">
            <path
              d="M5 12.5l4.5 4.5L19 7.5"
              fill="none"
              stroke="currentColor"
              strokeWidth="2.5"
              strokeLinecap="round"
              strokeLinejoin="round"
            />
          </svg>
        ) : (
          <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" data-testid="copy-icon">
            <path
              d="M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1"
              fill="none"
              stroke="currentColor"
              strokeWidth="2"
              strokeLinecap="round"
            />
          </svg>
        )}
      </button>
    </div>
  );
}
