/**
 * Live coverage for readers (issue 35) in Chromium: an update posted through the API reaches an open
 * page within 5 s behind a "1 new update" button, with no layout shift while it arrives (CLS 0,
 * measured by a PerformanceObserver as reader-layout-shift.spec.ts does); the click shows it first;
 * ending the coverage stops the page asking; the page is complete without JavaScript; axe in both themes.
 */
import type { APIRequestContext, Page } from '@playwright/test';
import { expectNoSeriousViolations } from './axe.ts';
import { expect, test } from './fixtures.ts';
import type { Article } from '../../src/schemas/article.ts';
import type { LiveUpdate } from '../../src/schemas/live.ts';
import { LIVE_POLL_MS } from '../../src/lib/live-blog.ts';
import { createArticle, declineCookies, recordLayoutShifts, signIn, totalShift, uniqueToken } from './reader-support.ts';

/** The bound: a reader with the page open sees a new update within 5 s. */
const ARRIVAL_MS = 5_000;

async function startLive(request: APIRequestContext, keyPoints: string[] = []): Promise<Article> {
  await signIn(request);
  const article = await createArticle(request, { title: `Live story ${uniqueToken('')}`, status: 'published', section: 'world' });
  const started = await request.put(`/api/articles/${article.id}/live`, { data: { status: 'live', keyPoints } });
  expect(started.status(), await started.text()).toBe(200);
  return article;
}

async function postUpdate(request: APIRequestContext, articleId: string, data: Record<string, unknown>): Promise<LiveUpdate> {
  const response = await request.post(`/api/articles/${articleId}/updates`, { data });
  expect(response.status(), await response.text()).toBe(201);
  return (await response.json()) as LiveUpdate;
}

/** Waits until the served page holds `text` (the worker writes it a few hundred milliseconds after the post). */
async function waitForPage(request: APIRequestContext, slug: string, text: string): Promise<void> {
  await expect(async () => expect(await (await request.get(`/article/${slug}`)).text()).toContain(text)).toPass({ timeout: 20_000 });
}

/** Waits until the page's islands have hydrated and it is quiet. */
async function settle(page: Page): Promise<void> {
  await expect(page.locator('astro-island[ssr][client=load]')).toHaveCount(0, { timeout: 15_000 });
  await page.waitForLoadState('load');
  await page.evaluate(() => document.fonts.ready);
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
}

test(
  'an update posted through the API reaches the open page within 5 s with no layout shift; the click shows it first; ending stops the polls',
  { tag: '@store' },
  async ({ page, request }) => {
    await declineCookies(page);
    const article = await startLive(request, ['Roads closed in the north']);
    const first = await postUpdate(request, article.id, { bodyHtml: '<p>Flood water is rising in the valley.</p>' });
    await waitForPage(request, article.slug, 'Flood water is rising');

    await recordLayoutShifts(page);
    let polls = 0;
    page.on('request', (r) => {
      if (r.url().endsWith(`/article/${article.slug}/live.json`)) polls++;
    });
    await page.goto(`/article/${article.slug}`);
    await settle(page);
    const reading = page.locator(`[data-update-id="${first.id}"]`);
    // The reader is reading the updates: the list is in view.
    await reading.scrollIntoViewIfNeeded();
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    const before = await reading.boundingBox();
    await page.evaluate(() => {
      (window as unknown as { __shifts: unknown[] }).__shifts = [];
    });

    const postedAt = Date.now();
    const second = await postUpdate(request, article.id, { bodyHtml: '<p>Rescue boats have reached the village.</p>', isBreaking: true });
    const button = page.getByTestId('live-new-button');
    await expect(button).toHaveText('1 new update', { timeout: ARRIVAL_MS });
    console.log(`[figure] live update on the open page after ${Date.now() - postedAt} ms`);
    // Nothing moved while it arrived: not the update being read, and no shift anywhere.
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    expect(await reading.boundingBox()).toEqual(before);
    const { cls, detail } = await totalShift(page);
    expect(cls, detail).toBe(0);
    await expect(page.locator(`[data-update-id="${second.id}"]`)).toHaveCount(0);

    await button.click();
    const arrived = page.locator(`[data-update-id="${second.id}"]`);
    await expect(arrived).toBeFocused();
    await expect(arrived).toContainText('Rescue boats have reached the village.');
    await expect(arrived.locator('.badge-breaking')).toHaveText('Breaking');
    await expect(button).toHaveCount(0);
    // Newest first: the arrival above the update the page was written with.
    const order = await page
      .locator('[data-testid="live-update"]')
      .evaluateAll((items) => items.map((li) => li.getAttribute('data-update-id')));
    expect(order).toEqual([second.id, first.id]);

    const ended = await request.put(`/api/articles/${article.id}/live`, { data: { status: 'ended' } });
    expect(ended.status()).toBe(200);
    await expect(page.getByTestId('live-ended-note')).toHaveText('The live coverage has ended.', { timeout: ARRIVAL_MS });
    const pollsAtEnd = polls;
    // Two more poll intervals pass with no poll: an ended coverage is asked no more (the absence has no event to wait on).
    await page.waitForTimeout(2 * LIVE_POLL_MS + 500);
    expect(polls).toBe(pollsAtEnd);
  },
);

test(
  'without JavaScript the page has the key points and every update, newest first; an ended page says so',
  { tag: '@store' },
  async ({ browser, request }) => {
    const article = await startLive(request, ['Schools are closed']);
    const older = await postUpdate(request, article.id, { bodyHtml: '<p>Snow started at dawn.</p>' });
    const newer = await postUpdate(request, article.id, { bodyHtml: '<p>Trains are cancelled.</p>' });
    await waitForPage(request, article.slug, 'Trains are cancelled.');
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`/article/${article.slug}`);
    await expect(page.getByTestId('live-key-points')).toContainText('Schools are closed');
    const order = await page
      .locator('[data-testid="live-updates"] > li')
      .evaluateAll((items) => items.map((li) => li.getAttribute('data-update-id')));
    expect(order).toEqual([newer.id, older.id]);
    await expect(page.getByTestId('live-status')).toContainText('2 updates');

    await request.put(`/api/articles/${article.id}/live`, { data: { status: 'ended' } });
    await waitForPage(request, article.slug, 'data-live-status="ended"');
    await page.reload();
    await expect(page.getByTestId('live-status')).toContainText('Ended');
    await expect(page.getByTestId('live-new-slot')).toHaveCount(0);
    await context.close();
  },
);

for (const theme of ['light', 'dark'] as const) {
  test(`axe: a live article with key points, a breaking update, an image and the new-updates button (${theme} theme)`, async ({
    page,
    request,
  }) => {
    await declineCookies(page);
    await page.addInitScript((value) => localStorage.setItem('meridian-theme', value), theme);
    const article = await startLive(request, ['Key point one', 'Key point two']);
    await postUpdate(request, article.id, {
      bodyHtml: '<p>An update with a picture.</p>',
      image: '/brand/default-hero.png',
      imageAlt: 'The scene at noon',
    });
    await postUpdate(request, article.id, { bodyHtml: '<p>A <a href="https://example.org/">breaking</a> one.</p>', isBreaking: true });
    await waitForPage(request, article.slug, 'A <a');
    await page.goto(`/article/${article.slug}`);
    await settle(page);
    await postUpdate(request, article.id, { bodyHtml: '<p>One more arrives.</p>' });
    await expect(page.getByTestId('live-new-button')).toBeVisible({ timeout: ARRIVAL_MS });
    await expectNoSeriousViolations(page, { include: '[data-testid="live-coverage"]' });
  });
}
