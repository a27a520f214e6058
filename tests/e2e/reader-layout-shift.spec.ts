/** No layout shift on a 390 px phone: the islands arrive into space the static HTML already reserved (CLS, measured by the browser). */
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import { findArticle, recordLayoutShifts, totalShift } from './reader-support.ts';

test.use({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });

/** The issue's target is 0.1; the islands' own shifts were 0.04-0.13 each, so a tighter budget names any one that comes back. */
const BUDGET = 0.02;

/**
 * A phone on a slow network: island code and API answers arrive well after the first paint, as they
 * do for Lighthouse's mobile run (on loopback they would often land before it and hide every shift).
 */
async function slowIslands(page: Page): Promise<void> {
  const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  await page.route(/\/api\//, async (route) => {
    await later(700);
    await route.continue();
  });
  await page.route(/\/_astro\/.*\.js$/, async (route) => {
    await later(300);
    await route.continue();
  });
}

/**
 * Waits until the islands in view have hydrated and the data they fetch has arrived (client:visible ones below the fold stay asleep, as for
 * a reader who does not scroll).
 */
async function settle(page: Page): Promise<void> {
  await expect(page.locator('astro-island[ssr][client=idle], astro-island[ssr][client=load]')).toHaveCount(0, { timeout: 15_000 });
  await page.waitForLoadState('load');
  await page.evaluate(() => document.fonts.ready);
  await page.evaluate(() => new Promise((resolve) => requestIdleCallback(() => requestIdleCallback(resolve))));
  // One more API round trip (delayed like the islands' own) so their answers are in and rendered.
  await page.evaluate(() => fetch('/api/health').then((r) => r.text()));
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
}

test('article page: CLS within budget while the islands load (votes, share, comments, ticker, account, banner)', async ({
  page,
  request,
}) => {
  const article = await findArticle(request, (a) => Boolean(a.heroImage));
  await slowIslands(page);
  await recordLayoutShifts(page);
  await page.goto(`/article/${article.slug}`);
  await settle(page);
  const { cls, detail } = await totalShift(page);
  console.log(`[figure] CLS article ${cls.toFixed(4)} ${detail}`);
  expect(cls, detail).toBeLessThanOrEqual(BUDGET);
});

test('section page: CLS within budget while the islands load (ticker, account, newsletter, banner)', async ({ page }) => {
  await slowIslands(page);
  await recordLayoutShifts(page);
  await page.goto('/section/world');
  await settle(page);
  const { cls, detail } = await totalShift(page);
  console.log(`[figure] CLS section ${cls.toFixed(4)} ${detail}`);
  expect(cls, detail).toBeLessThanOrEqual(BUDGET);
});

test('search page: CLS within budget; the no-query screen is in the static HTML', async ({ page }) => {
  const html = await (await page.request.get('/search')).text();
  expect(html).toContain('Enter a search query to find articles');
  await slowIslands(page);
  await recordLayoutShifts(page);
  await page.goto('/search');
  await settle(page);
  const { cls, detail } = await totalShift(page);
  console.log(`[figure] CLS search ${cls.toFixed(4)} ${detail}`);
  expect(cls, detail).toBeLessThanOrEqual(BUDGET);
});
