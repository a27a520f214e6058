/**
 * The dashboard's charts (issue 33) in Chromium: scripted page views read back from each chart's table
 * alternative, the article's own panel and sparkline, both themes under axe, 375 px wide, and Fetch Now's live progress.
 */
import http from 'node:http';
import type { APIRequestContext, Locator } from '@playwright/test';
import { expectNoSeriousViolations } from './axe.ts';
import { expect, test } from './fixtures.ts';
import type { AnalyticsSummary, ReferrerReport } from '../../src/schemas/analytics.ts';
import { readFixture } from '../fixtures/feeds/feed-server.ts';
import { createArticle, gotoAdmin, signInPage, uniqueToken } from './admin-helpers.ts';

const PHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const DESKTOP = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/** A chart's table alternative, opened by its toggle: the column names and each row's cells as shown. */
async function readTable(chart: Locator): Promise<{ columns: string[]; rows: string[][] }> {
  const toggle = chart.getByRole('button', { name: /^(Show|Hide) table$/ });
  await expect(toggle).toBeVisible();
  if ((await toggle.getAttribute('aria-expanded')) === 'false') await toggle.click();
  const table = chart.locator('table');
  await expect(table).toBeVisible();
  const columns = await table.locator('thead th').allInnerTexts();
  const rows = await table
    .locator('tbody tr')
    .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => (cell as HTMLElement).innerText.trim())));
  return { columns, rows };
}

function cell(table: { columns: string[]; rows: string[][] }, rowHeader: string, column: string): number {
  const row = table.rows.find((r) => r[0] === rowHeader);
  expect(row, `a row ${rowHeader} in ${table.columns.join(', ')}`).toBeDefined();
  return Number(row![table.columns.indexOf(column)]!.replaceAll(',', ''));
}

async function apiJson<T>(request: APIRequestContext, path: string): Promise<T> {
  const response = await request.get(path);
  expect(response.status(), path).toBe(200);
  return (await response.json()) as T;
}

/** Views sent as a reader's browser would (no session: staff views are not counted). */
async function sendViews(request: APIRequestContext, path: string, count: number, userAgent: string, extra: Record<string, string>) {
  for (let i = 0; i < count; i++) {
    const response = await request.post('/api/analytics/pageview', { data: { path, ...extra }, headers: { 'User-Agent': userAgent } });
    expect(response.status()).toBe(204);
  }
}

test(
  'the charts show scripted views exactly: by day and section, devices, referrers, the article panel and its sparkline',
  { tag: '@store' },
  async ({ page, playwright, baseURL }) => {
    // Many steps over a seeded 90-day history on a busy machine.
    test.slow();
    await signInPage(page);
    const token = uniqueToken('charts');
    const article = await createArticle(page.request, { title: `${token} Read in the charts`, section: 'culture', status: 'published' });
    const before = await apiJson<AnalyticsSummary>(page.request, '/api/analytics/summary');
    const today = before.to;
    const beforeToday = before.days.find((d) => d.day === today)!;
    const beforeReferrers = await apiJson<ReferrerReport>(page.request, '/api/analytics/referrers?limit=50');
    const googleBefore = beforeReferrers.items.find((item) => item.host === 'google.com')?.views ?? 0;

    const reader = await playwright.request.newContext({ baseURL });
    await sendViews(reader, `/article/${article.slug}`, 3, PHONE, { referrer: 'https://www.google.com/' });
    await sendViews(reader, `/article/${article.slug}`, 2, DESKTOP, { ref: 'newsletter' });
    await reader.dispose();

    // The recorder flushes its batch every few seconds: wait until the API counts all five.
    await expect
      .poll(
        async () => (await apiJson<AnalyticsSummary>(page.request, '/api/analytics/summary')).days.find((d) => d.day === today)?.views,
        {
          timeout: 20_000,
        },
      )
      .toBe(beforeToday.views + 5);

    await gotoAdmin(page, '/admin');
    const views = await readTable(page.getByTestId('chart-views'));
    expect(cell(views, today, 'Views')).toBe(beforeToday.views + 5);
    expect(cell(views, today, 'Culture')).toBe((beforeToday.sections.culture ?? 0) + 5);
    expect(views.rows).toHaveLength(30);

    const devices = await readTable(page.getByTestId('chart-devices'));
    expect(cell(devices, 'Mobile', 'Views')).toBe(before.devices.mobile + 3);
    expect(cell(devices, 'Desktop', 'Views')).toBe(before.devices.desktop + 2);

    const referrers = await readTable(page.getByTestId('chart-referrers'));
    expect(cell(referrers, 'google.com', 'Views')).toBe(googleBefore + 3);
    expect(referrers.rows.find((r) => r[0] === 'google.com')?.[1]).toBe('Search');

    // The 7-day switch asks for 7 days ending today, with today's figures unchanged.
    await page.getByRole('group', { name: 'Period', exact: true }).getByRole('button', { name: '7 days' }).click();
    await expect(page.getByTestId('chart-views').locator('tbody tr')).toHaveCount(7);
    expect(cell(await readTable(page.getByTestId('chart-views')), today, 'Views')).toBe(beforeToday.views + 5);

    // The article's own figures: its sparkline in the Article Manager, its panel in the editor.
    await page.getByRole('tab', { name: 'Article Manager' }).click();
    const card = page.locator(`[data-article-id="${article.id}"]`);
    await expect(card.getByRole('img', { name: /^Views of .* per day, last 14 days: / })).toHaveAttribute('aria-label', /: (0, ){13}5$/);
    await gotoAdmin(page, `/admin/editor/${article.id}`);
    const panel = page.getByTestId('article-views-panel');
    await expect(panel.getByTestId('article-total-views')).toHaveText('5');
    await expect(panel.getByTestId('article-total-comments')).toHaveText('0');
    const byHour = await readTable(panel.getByTestId('chart-article'));
    expect(byHour.columns).toEqual(['Hour (UTC)', 'Views']);
    expect(byHour.rows.reduce((sum, row) => sum + Number(row[1]), 0)).toBe(5);
  },
);

for (const theme of ['light', 'dark'] as const) {
  test(`the Overview's charts and the News Sources tab have no serious axe violations (${theme} theme)`, async ({ page }) => {
    // axe over six open tables takes a while on a busy 2-core machine; 7 days keeps them short, the markup is the same.
    test.slow();
    await page.addInitScript((value) => localStorage.setItem('meridian-theme', value), theme);
    await signInPage(page);
    await gotoAdmin(page, '/admin');
    if (theme === 'dark') await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
    else await expect(page.locator('html')).not.toHaveAttribute('data-theme', 'dark');
    await page.getByRole('group', { name: 'Period', exact: true }).getByRole('button', { name: '7 days' }).click();
    await expect(page.getByRole('group', { name: 'Period', exact: true }).getByRole('button', { name: '7 days' })).toHaveAttribute(
      'aria-pressed',
      'true',
    );
    for (const id of [
      'chart-views',
      'chart-top',
      'chart-referrers',
      'chart-devices',
      'chart-subscribers',
      'chart-published',
      'chart-members',
      'chart-mrr',
    ])
      await readTable(page.getByTestId(id));
    await expect(page.getByTestId('chart-views').locator('tbody tr')).toHaveCount(7);
    await expect(page.locator('.adm-chart-canvas canvas').first()).toBeVisible();
    await expectNoSeriousViolations(page);
    await page.getByRole('tab', { name: 'News Sources' }).click();
    await expect(page.getByTestId('news-source').first()).toBeVisible();
    await expectNoSeriousViolations(page);
  });
}

test("the dashboard's scripts carry uPlot (the marker reader-weight.spec.ts looks for in reader pages)", async ({ page }) => {
  const bodies: Promise<string>[] = [];
  page.on('response', (response) => {
    if (response.request().resourceType() === 'script') bodies.push(response.text().catch(() => ''));
  });
  await signInPage(page);
  await gotoAdmin(page, '/admin');
  await expect(page.locator('.adm-chart-canvas canvas').first()).toBeVisible();
  expect((await Promise.all(bodies)).some((body) => body.includes('u-over'))).toBe(true);
});

test.describe('375 px wide', () => {
  test.use({ viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true });

  test('the charts and their tables fit the width of a phone', async ({ page }) => {
    await signInPage(page);
    await gotoAdmin(page, '/admin');
    await readTable(page.getByTestId('chart-views'));
    await readTable(page.getByTestId('chart-published'));
    const canvases = page.locator('.adm-chart-canvas canvas');
    await expect(canvases.first()).toBeVisible();
    for (const canvas of await canvases.all()) expect((await canvas.boundingBox())!.width).toBeLessThanOrEqual(375);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
  });
});

test('Fetch Now shows the run while the feed downloads, then its counts and the last result', { tag: '@store' }, async ({ page }) => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const feed = http.createServer((_req, res) => {
    void held.then(() => {
      res.writeHead(200, { 'Content-Type': 'application/rss+xml' });
      res.end(readFixture('rss2sample.xml'));
    });
  });
  await new Promise<void>((resolve) => feed.listen(0, '127.0.0.1', resolve));
  try {
    await signInPage(page);
    const name = uniqueToken('Progress feed ');
    const port = (feed.address() as { port: number }).port;
    const created = await page.request.post('/api/news-sources', {
      data: { name, type: 'rss', url: `http://127.0.0.1:${port}/${name.replaceAll(' ', '-')}.xml`, section: 'tech' },
    });
    expect(created.status()).toBe(201);
    await gotoAdmin(page, '/admin');
    await page.getByRole('tab', { name: 'News Sources' }).click();
    const source = page.getByTestId('news-source').filter({ hasText: name });
    await source.getByRole('button', { name: 'Fetch Now' }).click();
    const progress = source.getByTestId('fetch-progress');
    await expect(progress).toHaveAttribute('data-state', 'running');
    await expect(progress).toContainText('Downloading the feed…');
    await expect(progress.getByTestId('fetch-read')).toHaveText('Read0');
    release();
    await expect(progress).toHaveAttribute('data-state', 'done');
    await expect(progress.getByTestId('fetch-read')).toHaveText('Read4');
    await expect(progress.getByTestId('fetch-created')).toHaveText('New4');
    await expect(source.getByTestId('source-last-fetch')).toContainText('Read 4 items: 4 new, 0 updated, 0 skipped, 0 refused');
  } finally {
    release();
    feed.closeAllConnections();
    await new Promise<void>((resolve) => feed.close(() => resolve()));
  }
});
