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
 * It waits on the islands themselves rather than on animation frames, which a loaded machine may not deliver in time.
 */
export async function revealIslands(page: Page): Promise<void> {
  const pending = page.locator('astro-island[ssr]');
  await expect(async () => {
    await page.evaluate(() => document.querySelector('astro-island[ssr] > *')?.scrollIntoView({ block: 'center' }));
    await expect(pending).toHaveCount(0, { timeout: 1_000 });
  }).toPass({ timeout: 20_000 });
}
