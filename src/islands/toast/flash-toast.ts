/** A toast carried over a full page navigation (e.g. 'Logged out' after going to /): stored for the next page's Toaster. */
import { toast } from './toast-store.ts';

const FLASH_KEY = 'meridian-flash-toast';
type Flash = Parameters<typeof toast>[0];

export function queueToastForNextPage(input: Flash): void {
  try {
    sessionStorage.setItem(FLASH_KEY, JSON.stringify(input));
  } catch {
    // Storage disabled: the toast is lost with the page, the navigation still happens.
  }
}

/** Shows (once) a toast queued by the previous page. */
export function showQueuedToast(): void {
  let raw: string | null = null;
  try {
    raw = sessionStorage.getItem(FLASH_KEY);
    sessionStorage.removeItem(FLASH_KEY);
  } catch {
    return;
  }
  if (!raw) return;
  try {
    const parsed = JSON.parse(raw) as Flash;
    if (typeof parsed.title === 'string') toast(parsed);
  } catch {
    // A malformed entry is dropped.
  }
}
