/** Shared steps of the reader e2e specs: demo articles found through the public API, toasts, hydration. */
import { expect, type APIRequestContext, type Page } from '@playwright/test';
import type { Article } from '../../src/schemas/article.ts';

export { createArticle, declineCookies, expectToast, signIn, signInPage, uniqueToken } from './admin-helpers.ts';

/** Published articles as the public API lists them (newest first). */
export async function listPublished(request: APIRequestContext, query: Record<string, string | number> = {}): Promise<Article[]> {
  const response = await request.get('/api/articles', { params: { pageSize: 100, ...query } });
  expect(response.status()).toBe(200);
  return (await response.json()) as Article[];
}

/** The first published article matching a predicate; fails the test when the demo content has none. */
export async function findArticle(
  request: APIRequestContext,
  predicate: (a: Article) => boolean,
  query: Record<string, string | number> = {},
): Promise<Article> {
  const found = (await listPublished(request, query)).find(predicate);
  expect(found, 'the demo content should contain a matching article').toBeTruthy();
  return found!;
}

/** Waits until the React island holding `selector` has hydrated (Astro drops the island's `ssr` attribute then). */
export async function waitForIsland(page: Page, selector: string): Promise<void> {
  await expect(page.locator(`astro-island:has(${selector})`).first()).not.toHaveAttribute('ssr');
}

/**
 * Brings every client:visible island into view, one at a time, until all have hydrated (an island
 * is `display: contents`, so it is its first child that is scrolled to, as Astro observes the children).
 * It waits on each island's own hydration (Astro drops its `ssr` attribute) rather than on animation
 * frames, which a loaded machine may not deliver in time, or on a polling interval, which cost a second an island.
 */
export async function revealIslands(page: Page): Promise<void> {
  await page.evaluate(async () => {
    const hydrated = (island: Element) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`an island did not hydrate in 20 s: ${island.outerHTML.slice(0, 200)}`)), 20_000);
        const done = () => {
          observer.disconnect();
          clearTimeout(timer);
          resolve();
        };
        const observer = new MutationObserver(() => {
          if (!island.hasAttribute('ssr')) done();
        });
        observer.observe(island, { attributes: true, attributeFilter: ['ssr'] });
        if (!island.hasAttribute('ssr')) done();
      });
    for (let island = document.querySelector('astro-island[ssr]'); island; island = document.querySelector('astro-island[ssr]')) {
      island.firstElementChild?.scrollIntoView({ block: 'center' });
      await hydrated(island);
    }
  });
  await expect(page.locator('astro-island[ssr]')).toHaveCount(0);
}

/** Starts recording layout-shift entries before the page's first byte (as Lighthouse and web-vitals count them). */
export async function recordLayoutShifts(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = window as unknown as { __shifts: { value: number; sources: string[] }[] };
    w.__shifts = [];
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries() as unknown as {
        value: number;
        hadRecentInput: boolean;
        sources?: { node?: Node | null }[];
      }[]) {
        if (entry.hadRecentInput) continue;
        const sources = (entry.sources ?? []).map((s) => {
          const el = s.node instanceof Element ? s.node : s.node?.parentElement;
          return el ? `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}.${[...el.classList].join('.')}` : '?';
        });
        w.__shifts.push({ value: entry.value, sources });
      }
    }).observe({ type: 'layout-shift', buffered: true });
  });
}

/**
 * The shifts recorded so far, summed: never less than the page's CLS (web-vitals' largest session window of
 * shifts, gaps under 1 s, windows under 5 s), with the elements that moved.
 */
export async function totalShift(page: Page): Promise<{ cls: number; detail: string }> {
  const shifts = await page.evaluate(() => (window as unknown as { __shifts: { value: number; sources: string[] }[] }).__shifts);
  const cls = shifts.reduce((sum, s) => sum + s.value, 0);
  return { cls, detail: shifts.map((s) => `${s.value.toFixed(4)} ${s.sources.join(' ')}`).join('; ') };
}
