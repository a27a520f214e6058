/** Share targets of the article page: each opens a 600x400 popup with the absolute article URL. */

export type ShareNetwork = 'facebook' | 'linkedin' | 'tiktok';

/** Share popup size (docs/product.md, Interface rules: timings and sizes). */
export const SHARE_POPUP = { width: 600, height: 400 } as const;

export const SHARE_NETWORKS: Array<{ network: ShareNetwork; label: string }> = [
  { network: 'facebook', label: 'Facebook' },
  { network: 'linkedin', label: 'LinkedIn' },
  { network: 'tiktok', label: 'TikTok' },
];

/** The share URL of a network for an absolute article URL. */
export function buildShareUrl(network: ShareNetwork, articleUrl: string): string {
  const url = encodeURIComponent(articleUrl);
  switch (network) {
    case 'facebook':
      return `https://www.facebook.com/sharer/sharer.php?u=${url}`;
    case 'linkedin':
      return `https://www.linkedin.com/sharing/share-offsite/?url=${url}`;
    case 'tiktok':
      return `https://www.tiktok.com/share?url=${url}`;
  }
}

/** Opens a centred popup of the share size (or a tab where popups are not possible). */
export function openSharePopup(shareUrl: string): void {
  const { width, height } = SHARE_POPUP;
  const left = Math.max(0, Math.round(window.screenX + (window.outerWidth - width) / 2));
  const top = Math.max(0, Math.round(window.screenY + (window.outerHeight - height) / 2));
  const popup = window.open(shareUrl, 'share', `popup=yes,width=${width},height=${height},left=${left},top=${top}`);
  // Cut the link back to this page (noopener in the features would make some browsers ignore the size).
  if (popup) popup.opener = null;
}
