/** The back office on a 390 px wide phone: no page scrolls sideways. */
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import { createArticle, declineCookies, gotoAdmin, signInPage, uniqueToken } from './admin-helpers.ts';

test.use({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });

async function expectNoHorizontalScroll(page: Page, where: string) {
  const { overflow, culprits } = await page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    // The deepest elements sticking out name the cause in the failure message.
    const culprits = [...document.querySelectorAll('body *')]
      .filter(
        (el) => el.getBoundingClientRect().right > width + 1 && ![...el.children].some((c) => c.getBoundingClientRect().right > width + 1),
      )
      .slice(0, 5)
      .map((el) => `${el.tagName.toLowerCase()}.${[...el.classList].join('.')} right=${Math.round(el.getBoundingClientRect().right)}`);
    return { overflow: document.documentElement.scrollWidth - width, culprits };
  });
  expect(overflow, `${where} scrolls sideways by ${overflow}px: ${culprits.join('; ')}`).toBeLessThanOrEqual(0);
}

test('login, dashboard tabs and editor fit 390 px', async ({ page }) => {
  await declineCookies(page);
  await gotoAdmin(page, '/login');
  await expect(page.getByRole('button', { name: 'Log In' })).toBeVisible();
  await expectNoHorizontalScroll(page, '/login');

  await signInPage(page);
  // Long unbroken words are the usual culprits.
  const token = uniqueToken('mobile');
  const article = await createArticle(page.request, {
    title: `${token} Supercalifragilisticexpialidocious-internationalisation-announcement headline`,
    status: 'published',
    sourceLabel: 'AVeryLongWireServiceNameWithoutAnySpaces',
    tags: ['averyveryverylongtagwithoutspacesatall'],
    authorName: 'Correspondent',
  });
  await page.request.post(`/api/articles/${article.id}/comments`, {
    data: {
      authorName: 'Reader',
      authorEmail: 'a-really-long-address-for-testing@example-newsroom-domain.com',
      content: `Looooooooooooooooooooooooooooooooooooooooooooooong ${token}`,
    },
  });
  await page.request.post('/api/news-sources', {
    data: {
      name: `Mobile feed ${token}`,
      type: 'rss',
      url: `https://example.com/a/very/long/path/to/a/feed/${token}/rss.xml`,
      section: 'world',
    },
  });

  await gotoAdmin(page, '/admin');
  await expect(page.getByTestId('recent-article').first()).toBeVisible();
  await expectNoHorizontalScroll(page, 'Overview');
  await page.getByRole('tab', { name: 'Article Manager' }).click();
  await expect(page.getByTestId('manager-article').first()).toBeVisible();
  await expectNoHorizontalScroll(page, 'Article Manager');
  await page.getByRole('tab', { name: 'Comments' }).click();
  await expect(page.getByTestId('admin-comment').first()).toBeVisible();
  await expectNoHorizontalScroll(page, 'Comments');
  await page.getByRole('tab', { name: 'News Sources' }).click();
  await page.getByRole('button', { name: 'Add Source' }).click();
  await expect(page.getByTestId('news-source').first()).toBeVisible();
  await expectNoHorizontalScroll(page, 'News Sources');

  await gotoAdmin(page, `/admin/editor/${article.id}`);
  await expect(page.getByLabel('Title')).toHaveValue(article.title);
  await page.getByRole('button', { name: /Pick a date/ }).click();
  await expect(page.getByLabel('Publish date')).toBeVisible();
  await expectNoHorizontalScroll(page, 'Editor');
});

/** Wide faces that any Debian machine with Chromium has (DejaVu comes with it); a wide font must never make a page scroll sideways. */
const WIDE_FONTS = ["'DejaVu Sans Mono', monospace", "'DejaVu Serif', serif", "'DejaVu Sans', sans-serif"];

test.describe('any font', () => {
  // The injected style below is a test's own inline style, which the pages' CSP rightly refuses.
  test.use({ bypassCSP: true });

  test('the header fits 390 px signed in, whatever font the machine renders it with', async ({ page }) => {
    await signInPage(page);
    for (const font of WIDE_FONTS) {
      for (const path of ['/section/world', '/admin']) {
        await page.goto(path);
        await expect(page.getByRole('button', { name: 'Logout' })).toBeVisible();
        // Every element, web font or not, in a wide face with a little extra tracking.
        await page.addStyleTag({
          content: `*, *::before, *::after { font-family: ${font} !important; letter-spacing: 0.02em !important; }`,
        });
        await expectNoHorizontalScroll(page, `${path} in ${font}`);
      }
    }
  });
});
