/** Publish -> findable as a reader finds it: Chromium on /search with /api/search cut off, so only the Pagefind index answers. */
import type { Browser } from 'playwright-core';

/**
 * Searches the way a reader does: /search in Chromium with /api/search cut off, so only the Pagefind index (however it is split) can
 * answer. Waits for the page's answer (the article's link, or the empty state), not for a timeout, so a miss costs one search.
 */
export async function findableThroughPagefind(browser: Browser, origin: string, word: string, href: string): Promise<boolean> {
  const context = await browser.newContext();
  try {
    await context.route('**/api/search**', (route) => route.abort());
    const page = await context.newPage();
    await page.goto(`${origin}/search?q=${encodeURIComponent(word)}`, { waitUntil: 'domcontentloaded' });
    const link = `main a[href="${href}"]`;
    // Before the island reads the query the page shows its "Enter a search query" state: only these end a search.
    const answered = [link, `main .empty-state:has-text("${word}")`, 'main .empty-state:has-text("unavailable")'].join(', ');
    await page.waitForSelector(answered, { timeout: 60_000 }).catch(() => undefined);
    return (await page.locator(link).count()) > 0;
  } finally {
    await context.close();
  }
}

/**
 * What a reader's browser loads first from the Pagefind index: the bundle list and the newest bundle's entry file (whose
 * hashes change with the bundle's content). Cheap to poll, so the browser searches only once the index has changed.
 */
export async function pagefindHead(origin: string): Promise<string> {
  const periods = await fetch(`${origin}/pagefind/periods.json`, { cache: 'no-store' })
    .then((r) => (r.ok ? r.text() : ''))
    .catch(() => '');
  let newest: unknown;
  try {
    newest = (JSON.parse(periods) as { periods?: unknown[] }).periods?.[0];
  } catch {
    return periods;
  }
  if (typeof newest !== 'string') return periods;
  const entry = await fetch(`${origin}/pagefind/${newest}/pagefind-entry.json`, { cache: 'no-store' })
    .then((r) => (r.ok ? r.text() : ''))
    .catch(() => '');
  return periods + entry;
}
