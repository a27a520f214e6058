/** The reader's cookie choice (remembered in localStorage) and the first-party page-view beacon that waits for it. */

export type ConsentChoice = 'accepted' | 'declined';
export const CONSENT_KEY = 'meridian-cookie-consent';
export const PAGEVIEW_ENDPOINT = '/api/analytics/pageview';

export function readConsent(): ConsentChoice | undefined {
  try {
    const value = localStorage.getItem(CONSENT_KEY);
    return value === 'accepted' || value === 'declined' ? value : undefined;
  } catch {
    return undefined;
  }
}

export function storeConsent(choice: ConsentChoice): void {
  try {
    localStorage.setItem(CONSENT_KEY, choice);
  } catch {
    // Storage disabled: the choice lasts for this page only.
  }
}

/** The beacon's body: the page, the campaign tag of its URL (`ref`, else `utm_source`) and where the reader came from. */
export function pageViewBody(
  path: string,
  search: string,
  referrer: string,
  origin: string,
): { path: string; ref?: string; referrer?: string } {
  const params = new URLSearchParams(search);
  const ref = (params.get('ref') ?? params.get('utm_source'))?.slice(0, 100);
  // A page of this site counts as direct on the server: not sent, so the body stays `{ path }` within the site.
  const external = referrer !== '' && !referrer.startsWith(`${origin}/`);
  return { path, ...(ref ? { ref } : {}), ...(external ? { referrer: referrer.slice(0, 1024) } : {}) };
}

/** Reports this page view once per page load (sendBeacon survives navigation and never blocks it). */
export function sendPageView(path: string = location.pathname): void {
  const marker = window as unknown as { __meridianPageViewSent?: boolean };
  if (marker.__meridianPageViewSent) return;
  marker.__meridianPageViewSent = true;
  const body = JSON.stringify(pageViewBody(path, location.search, document.referrer, location.origin));
  if (navigator.sendBeacon?.(PAGEVIEW_ENDPOINT, body)) return;
  void fetch(PAGEVIEW_ENDPOINT, {
    method: 'POST',
    body,
    keepalive: true,
    credentials: 'include',
    headers: { 'Content-Type': 'application/json' },
  }).catch(() => {});
}
