/** Shared steps of the admin e2e specs: sign in through the real API, create real data, read it back. */
import { expect, type APIRequestContext, type Page } from '@playwright/test';
import { E2E_ADMIN } from './fixtures.ts';
import type { Article, ArticleInput } from '../../src/schemas/article.ts';
import { CONSENT_KEY } from '../../src/islands/consent/consent.ts';

/** A token unique to one test, so its data never collides with seeded data or other tests. */
export function uniqueToken(prefix: string): string {
  return `${prefix}${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}

/**
 * Signs the browser context in (page.request shares the context's cookies). The login throttle is
 * per IP, so a spec that provoked a 429 makes this wait out the Retry-After the server names.
 */
export async function signIn(request: APIRequestContext): Promise<void> {
  for (let attempt = 0; attempt < 12; attempt++) {
    const response = await request.post('/api/auth/login', { data: E2E_ADMIN });
    if (response.ok()) return;
    if (response.status() !== 429) throw new Error(`Sign-in failed: ${response.status()} ${await response.text()}`);
    const wait = Number(response.headers()['retry-after'] ?? '1');
    await new Promise((resolve) => setTimeout(resolve, Math.min(wait, 30) * 1000 + 100));
  }
  throw new Error('Sign-in kept answering 429');
}

/** Signs the page's context in; the cookie choice is made up front so the banner never covers buttons. */
export async function signInPage(page: Page): Promise<void> {
  await declineCookies(page);
  await signIn(page.request);
}

export async function declineCookies(page: Page): Promise<void> {
  await page.addInitScript((key) => window.localStorage.setItem(key, 'declined'), CONSENT_KEY);
}

export async function createArticle(request: APIRequestContext, input: Partial<ArticleInput> & { title: string }): Promise<Article> {
  const response = await request.post('/api/articles', { data: { bodyHtml: '<p>Body text.</p>', ...input } });
  expect(response.status(), await response.text()).toBe(201);
  return (await response.json()) as Article;
}

export async function getArticle(request: APIRequestContext, id: string): Promise<Article> {
  const response = await request.get(`/api/articles/${id}`);
  expect(response.status()).toBe(200);
  return (await response.json()) as Article;
}

/** The toast currently shown (the Toaster shows one at a time). */
export function currentToast(page: Page) {
  return page.getByTestId('toast');
}

/** Expects the toast with this title (and description) to be shown. */
export async function expectToast(page: Page, title: string, description?: string | RegExp): Promise<void> {
  const toast = currentToast(page);
  await expect(toast.locator('.toast-title')).toHaveText(title);
  if (description !== undefined) await expect(toast.locator('.toast-description')).toHaveText(description);
}

/** Accepts (or dismisses) the next window.confirm and records its text. */
export function answerNextConfirm(page: Page, accept: boolean): Promise<string> {
  return new Promise((resolve) => {
    page.once('dialog', async (dialog) => {
      expect(dialog.type()).toBe('confirm');
      const message = dialog.message();
      if (accept) await dialog.accept();
      else await dialog.dismiss();
      resolve(message);
    });
  });
}

/** Waits until the page's admin island has hydrated (it marks its root), so clicks reach React. */
export async function waitForIsland(page: Page): Promise<void> {
  await expect(page.locator('[data-hydrated="true"]').first()).toBeAttached();
}

/** Opens a back-office page and waits for its island. */
export async function gotoAdmin(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await waitForIsland(page);
}
