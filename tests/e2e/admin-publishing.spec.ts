/**
 * The Overview's Publishing panel (issue 33) in Chromium: a published page shows as written, a render
 * that really fails (a file where the article's folder must be) shows with its error, the panel passes
 * axe in both themes and fits 375 px with it, and Retry, once the cause is gone, toasts and writes it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expectNoSeriousViolations } from './axe.ts';
import { expect, test } from './fixtures.ts';
import { createArticle, currentToast, gotoAdmin, signInPage, uniqueToken } from './admin-helpers.ts';

test(
  'the Publishing panel shows a written page and a failed render, and Retry toasts and writes it',
  { tag: '@store' },
  async ({ page, site }) => {
    test.slow();
    await signInPage(page);
    const token = uniqueToken('pub');
    const written = await createArticle(page.request, { title: `${token} Went out fine`, section: 'world', status: 'published' });
    const blocked = await createArticle(page.request, { title: `${token} Blocked on disk`, section: 'world' });
    const blockedPath = `/article/${blocked.slug}`;
    // A file where the article's folder must be: its write meets ENOTDIR (root or not).
    const blocker = path.join(site.clientDir, 'article', blocked.slug);
    fs.writeFileSync(blocker, 'not a folder');
    try {
      const published = await page.request.put(`/api/articles/${blocked.id}`, { data: { status: 'published' } });
      expect(published.status(), await published.text()).toBe(200);

      await gotoAdmin(page, '/admin');
      const panel = page.getByTestId('publishing-panel');
      await expect(panel.getByRole('heading', { name: 'Publishing' })).toBeVisible();
      await expect(
        panel
          .getByTestId('recent-render')
          .filter({ hasText: `/article/${written.slug}` })
          .first(),
      ).toHaveAttribute('data-outcome', 'written', { timeout: 20_000 });
      const failed = panel.getByTestId('failed-render').filter({ hasText: blockedPath });
      await expect(failed).toBeVisible({ timeout: 20_000 });
      await expect(failed).toContainText('ENOTDIR: not a directory');
      await expect(failed).toContainText(/\d+ attempts?/);
      // Relative times carry the absolute one.
      await expect(panel.getByTestId('recent-render').first().locator('time')).toHaveAttribute('datetime', /^\d{4}-\d\d-\d\dT/);

      await expectNoSeriousViolations(page, { include: '[data-testid="publishing-panel"]' });
      await page.evaluate(() => document.documentElement.setAttribute('data-theme', 'dark'));
      await expectNoSeriousViolations(page, { include: '[data-testid="publishing-panel"]' });
      await page.evaluate(() => document.documentElement.removeAttribute('data-theme'));

      await page.setViewportSize({ width: 375, height: 812 });
      await expect(failed).toBeVisible();
      expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
      expect((await panel.boundingBox())!.width).toBeLessThanOrEqual(375);
    } finally {
      fs.rmSync(blocker, { force: true });
    }

    await page
      .getByTestId('publishing-panel')
      .getByRole('button', { name: `Retry ${blockedPath}` })
      .click();
    // The job's own backoff retry can win the race with the click once the blocker is gone (it did in CI);
    // the panel then says so instead of an error.
    const title = currentToast(page).locator('.toast-title');
    await expect(title).toHaveText(/^(Retry started|Nothing to retry)$/);
    await expect(currentToast(page).locator('.toast-description')).toHaveText(
      (await title.textContent()) === 'Retry started' ? `Retrying ${blockedPath}` : 'The page was written meanwhile.',
    );
    const panel = page.getByTestId('publishing-panel');
    await expect(panel.getByTestId('recent-render').filter({ hasText: blockedPath }).first()).toHaveAttribute('data-outcome', 'written', {
      timeout: 20_000,
    });
    await expect(panel.getByTestId('failed-render').filter({ hasText: blockedPath })).toHaveCount(0);
    expect((await page.request.get(blockedPath)).status()).toBe(200);
  },
);
