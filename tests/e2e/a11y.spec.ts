/** Accessibility: axe-core on every reader page type, in the light and the dark theme, with no serious or critical violation. */
import { expectNoSeriousViolations } from './axe.ts';
import { expect, test } from './fixtures.ts';
import { declineCookies, findArticle, revealIslands } from './reader-support.ts';

for (const theme of ['light', 'dark'] as const) {
  test.describe(`${theme} theme`, () => {
    test.beforeEach(async ({ page }) => {
      await declineCookies(page);
      await page.addInitScript((value) => localStorage.setItem('meridian-theme', value), theme);
    });

    test('section listing', async ({ page }) => {
      await page.goto('/section/world');
      if (theme === 'dark') await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
      else await expect(page.locator('html')).not.toHaveAttribute('data-theme', 'dark');
      await expect(page.getByTestId('breaking-ticker')).toBeVisible();
      await revealIslands(page);
      await expectNoSeriousViolations(page);
    });

    test('article with votes and comments', async ({ page, request }) => {
      const article = await findArticle(request, (a) => Boolean(a.sourceUrl && a.dek));
      await page.goto(`/article/${article.slug}`);
      await revealIslands(page);
      await expect(page.getByTestId('like-count')).toHaveText(/\d/);
      await expect(page.getByRole('heading', { name: /^Comments/ })).toBeVisible();
      await expectNoSeriousViolations(page);
    });

    test('search with results', async ({ page }) => {
      await page.goto('/search?q=the');
      await expect(page.getByRole('list', { name: 'Search results' })).toBeVisible();
      await revealIslands(page);
      await expectNoSeriousViolations(page);
    });

    test('search without a query', async ({ page }) => {
      await page.goto('/search');
      await expect(page.getByText('Enter a search query to find articles')).toBeVisible();
      await expectNoSeriousViolations(page);
    });

    for (const path of ['/about', '/contact', '/terms', '/privacy', '/cookies', '/accessibility', '/careers', '/press']) {
      test(`static page ${path}`, async ({ page }) => {
        await page.goto(path);
        await revealIslands(page);
        await expectNoSeriousViolations(page);
      });
    }

    test('not found', async ({ page }) => {
      await page.goto('/no-such-page');
      await expectNoSeriousViolations(page);
    });

    test('cookie banner and a toast', async ({ page, context }) => {
      await context.clearCookies();
      await page.addInitScript(() => localStorage.removeItem('meridian-cookie-consent'));
      await page.goto('/about');
      await expect(page.getByRole('region', { name: 'We value your privacy' })).toBeVisible();
      await expectNoSeriousViolations(page);
      await expect(page.locator('.cookie-banner')).toHaveAttribute('data-ready', 'true');
      await page.getByRole('button', { name: 'Decline' }).click();
      await revealIslands(page);
      await page.getByLabel('Email address').fill('no-at-sign');
      await page.getByRole('button', { name: 'Subscribe' }).click();
      await expect(page.getByTestId('toast')).toBeVisible();
      // Measure the toast's colours once its entrance animation has finished.
      await page.getByTestId('toast').evaluate((el) => Promise.all(el.getAnimations().map((a) => a.finished)));
      await expectNoSeriousViolations(page);
    });
  });
}

test.describe('mobile menu open', () => {
  test.use({ viewport: { width: 390, height: 844 } });
  test('no violations with the menu open', async ({ page }) => {
    await declineCookies(page);
    await page.goto('/section/tech');
    await page.getByTestId('menu-toggle').click();
    await expect(page.getByRole('navigation', { name: 'Main' })).toBeVisible();
    await expectNoSeriousViolations(page);
  });
});
