/**
 * A clean console for readers: no errors, no CSP violations, and signed-out visitors never ask GET /api/auth/me (no 401 logged); signed-in
 * editors still get Admin and Logout.
 */
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import { declineCookies, findArticle, signIn, waitForIsland } from './reader-support.ts';

/** Collects console errors, failed requests and error answers of a page, and every call of /api/auth/me. */
function watchConsole(page: Page) {
  const errors: string[] = [];
  const authCalls: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => {
    // Requests still loading when the test moves to the next page are aborted by the navigation, silently.
    if (request.failure()?.errorText !== 'net::ERR_ABORTED') errors.push(`failed: ${request.url()} ${request.failure()?.errorText ?? ''}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400) errors.push(`HTTP ${response.status()}: ${response.url()}`);
  });
  page.on('request', (request) => {
    if (new URL(request.url()).pathname === '/api/auth/me') authCalls.push(request.url());
  });
  return { errors, authCalls };
}

/** Lets the hydrated islands run their effects (the browser goes idle) and finish a round trip to the server. */
async function settle(page: Page): Promise<void> {
  await page.evaluate(() => new Promise((resolve) => requestIdleCallback(() => requestIdleCallback(resolve))));
  await page.evaluate(() => fetch('/api/health').then((r) => r.text()));
}

test('reader pages log no console error for a signed-out visitor and never ask who is signed in', async ({ page, request }) => {
  await declineCookies(page);
  // Refused by our CSP even when the page copes (zod's eval probe did): Chrome lists each as an issue.
  await page.addInitScript(() => {
    const seen: string[] = ((window as unknown as { __cspViolations: string[] }).__cspViolations = []);
    document.addEventListener('securitypolicyviolation', (e) =>
      seen.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`),
    );
  });
  const article = await findArticle(request, () => true);
  const watched = watchConsole(page);
  for (const path of [`/article/${article.slug}`, '/section/world', '/search?q=market', '/about']) {
    await page.goto(path);
    // The account island has hydrated and settled on Login: whatever it was going to ask, it has asked.
    await waitForIsland(page, '.header-login');
    await expect(page.locator('header.site-header').getByRole('link', { name: 'Login' })).toBeVisible();
    await settle(page);
    expect(
      await page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations),
      `CSP violations on ${path}`,
    ).toEqual([]);
  }
  expect(watched.errors).toEqual([]);
  expect(watched.authCalls).toEqual([]);
  expect((await page.context().cookies()).map((c) => c.name)).not.toContain('signed_in');
});

test('signed in: the hint makes the header ask, and Admin and Logout show; logout clears the hint', async ({ page, request }) => {
  await declineCookies(page);
  const article = await findArticle(request, () => true);
  await signIn(page.request);
  const hint = (await page.context().cookies()).find((c) => c.name === 'signed_in');
  expect(hint?.value).toBe('1');
  expect(hint?.httpOnly).toBe(false);
  const watched = watchConsole(page);
  await page.goto(`/article/${article.slug}`);
  const header = page.locator('header.site-header');
  await expect(header.getByRole('link', { name: 'Admin' })).toHaveAttribute('href', '/admin');
  await expect(header.getByRole('button', { name: 'Logout' })).toBeVisible();
  expect(watched.authCalls.length).toBeGreaterThan(0);
  await header.getByRole('button', { name: 'Logout' }).click();
  await expect(page).toHaveURL(/\/section\/world$/);
  await expect(page.locator('header.site-header').getByRole('link', { name: 'Login' })).toBeVisible();
  expect((await page.context().cookies()).map((c) => c.name)).not.toContain('signed_in');
  expect(watched.errors).toEqual([]);
});
