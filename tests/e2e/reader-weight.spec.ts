/**
 * What a reader's browser downloads in JavaScript: the article page within its 90 KB (gzip) budget,
 * and no reader page carrying zod or the dashboard's chart library (uPlot, admin pages only).
 * Islands that imported one constant from a schema module took zod and the schemas along (25 KB gzip
 * on every article page) without anything else changing.
 */
import { gzipSync } from 'node:zlib';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import { createArticle, revealIslands, signIn, uniqueToken } from './reader-support.ts';

const ARTICLE_JS_BUDGET_KB = 90;
/** What a members-only story's page may add to it: the paywall island (0.9 KB gzip when measured). */
const PAYWALL_JS_BUDGET_KB = 1.5;

/** Every script the page loads, the islands below the fold included (scrolled into view), by URL. */
async function scriptsOf(page: Page, url: string): Promise<Map<string, Buffer>> {
  const scripts = new Map<string, Buffer>();
  const pending: Promise<void>[] = [];
  page.on('response', (response) => {
    if (response.request().resourceType() !== 'script') return;
    pending.push(
      response.body().then(
        (body) => void scripts.set(response.url(), body),
        () => {},
      ),
    );
  });
  await page.goto(url);
  await revealIslands(page);
  await page.waitForLoadState('load');
  await Promise.all(pending);
  return scripts;
}

/** Zod's core names its schema classes in strings that survive minification. */
function withZod(scripts: Map<string, Buffer>): string[] {
  return [...scripts].filter(([, body]) => body.includes('$ZodType')).map(([url]) => new URL(url).pathname);
}

/** uPlot's overlay class name survives minification (admin-analytics.spec.ts finds it in the dashboard's scripts). */
function withUplot(scripts: Map<string, Buffer>): string[] {
  return [...scripts].filter(([, body]) => body.includes('u-over')).map(([url]) => new URL(url).pathname);
}

/** Gzip kilobytes of every script. */
function gzipKBOf(scripts: Map<string, Buffer>): number {
  return [...scripts.values()].reduce((sum, body) => sum + gzipSync(body).length, 0) / 1024;
}

test('article page: JavaScript within its gzip budget, and no zod; a gated story adds only its paywall', async ({
  page,
  playwright,
  site,
}) => {
  const request = await playwright.request.newContext({ baseURL: site.url, extraHTTPHeaders: { Origin: site.url } });
  await signIn(request);
  // Both stories made here: an earlier spec on this site may have published live or gated ones, which carry more islands.
  const body = Array.from({ length: 6 }, (_, i) => `<p>Paragraph ${i + 1} of a story.</p>`).join('');
  const article = await createArticle(request, { title: uniqueToken('Weighed story '), status: 'published', bodyHtml: body });
  await expect.poll(async () => (await request.get(`/article/${article.slug}`)).status(), { timeout: 30_000 }).toBe(200);
  const scripts = await scriptsOf(page, `/article/${article.slug}`);
  expect(scripts.size).toBeGreaterThan(3);
  expect(withZod(scripts)).toEqual([]);
  expect(withUplot(scripts)).toEqual([]);
  const gzipKB = gzipKBOf(scripts);
  expect(gzipKB, `article page JavaScript: ${gzipKB.toFixed(1)} KB gzip in ${scripts.size} files`).toBeLessThanOrEqual(
    ARTICLE_JS_BUDGET_KB,
  );

  // Issue 48: a members-only story's page carries the paywall island on top, and nothing else.
  const gated = await createArticle(request, {
    title: uniqueToken('Weighed gated story '),
    status: 'published',
    access: 'members',
    bodyHtml: body,
  });
  await expect.poll(async () => (await request.get(`/article/${gated.slug}`)).status(), { timeout: 30_000 }).toBe(200);
  await request.dispose();
  const gatedScripts = await scriptsOf(page, `/article/${gated.slug}`);
  expect(withZod(gatedScripts)).toEqual([]);
  const added = gzipKBOf(gatedScripts) - gzipKB;
  expect(added, `the paywall adds ${added.toFixed(2)} KB gzip`).toBeLessThanOrEqual(PAYWALL_JS_BUDGET_KB);
});

for (const path of ['/section/world', '/search?q=council']) {
  test(`${path}: no zod and no chart library in the reader's scripts`, async ({ page }) => {
    const scripts = await scriptsOf(page, path);
    expect(scripts.size).toBeGreaterThan(3);
    expect(withZod(scripts)).toEqual([]);
    expect(withUplot(scripts)).toEqual([]);
  });
}
