/**
 * Tag and author archives (issue 35) as a reader meets them: from an article's tag link to the tag
 * page, from its byline to the author page, paging, related reading, axe in both themes and 375 px.
 */
import { expectNoSeriousViolations } from './axe.ts';
import { expect, test } from './fixtures.ts';
import { createArticle, declineCookies, expectToast, revealIslands, signIn, signInPage, uniqueToken } from './reader-support.ts';

test.describe('tag and author archives', () => {
  const created: string[] = [];
  const token = uniqueToken('archive');
  const tag = `Tide ${token}`;
  const tagSlug = tag.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  const author = `Reporter ${token}`;
  const authorSlug = author.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  let newestSlug = '';

  test.beforeAll(async ({ playwright, site }) => {
    test.setTimeout(120_000);
    const api = await playwright.request.newContext({ baseURL: site.url });
    await signIn(api);
    for (let i = 1; i <= 13; i++) {
      const article = await createArticle(api, {
        title: `Tide tables ${token} part ${i}`,
        dek: 'A filler story for the archive test.',
        tags: [tag, 'Coasts'],
        authorName: author,
        section: 'world',
        status: 'published',
      });
      created.push(article.id);
      newestSlug = article.slug;
    }
    // Publishing writes the archive files in the background.
    await expect.poll(async () => (await api.get(`/tag/${tagSlug}/page/2`)).status(), { timeout: 30_000 }).toBe(200);
    await api.dispose();
  });

  test.afterAll(async ({ playwright, site }) => {
    const api = await playwright.request.newContext({ baseURL: site.url });
    await signIn(api);
    for (const id of created) await api.delete(`/api/articles/${id}`);
    await api.dispose();
  });

  test("an article's tag leads to the tag page, its byline to the author page, and pages go on", async ({ page }) => {
    await declineCookies(page);
    await page.goto(`/article/${newestSlug}`);
    await page.getByRole('list', { name: 'Tags' }).getByRole('link', { name: tag }).click();
    await expect(page).toHaveURL(new RegExp(`/tag/${tagSlug}$`));
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(tag);
    await expect(page.getByTestId('term-count')).toHaveText('13 articles');
    await expect(page.getByTestId('article-card')).toHaveCount(12);
    expect(await page.locator('link[rel="canonical"]').getAttribute('href')).toMatch(new RegExp(`/tag/${tagSlug}$`));
    await expect(page.locator('link[rel="alternate"][type="application/rss+xml"]')).toHaveAttribute('href', `/tag/${tagSlug}/rss.xml`);

    const pager = page.getByRole('navigation', { name: `${tag} pages` });
    await pager.getByRole('link', { name: 'Next →' }).click();
    await expect(page).toHaveURL(new RegExp(`/tag/${tagSlug}/page/2$`));
    await expect(page.getByTestId('article-card')).toHaveCount(1);
    await expect(page.getByRole('navigation', { name: `${tag} pages` }).getByRole('link', { name: 'Page 2' })).toHaveAttribute(
      'aria-current',
      'page',
    );

    await page.goto(`/article/${newestSlug}`);
    await page.locator('.byline').getByRole('link', { name: author }).click();
    await expect(page).toHaveURL(new RegExp(`/author/${authorSlug}$`));
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(author);
  });

  test('related reading under an article leads to another article', async ({ page }) => {
    await declineCookies(page);
    await page.goto(`/article/${newestSlug}`);
    const related = page.getByTestId('related-reading');
    await expect(related.getByRole('heading', { name: 'Related reading' })).toBeVisible();
    const cards = related.getByTestId('article-card');
    await expect(cards).toHaveCount(4);
    await cards.first().locator('.card-title a').click();
    await expect(page).toHaveURL(/\/article\//);
    expect(page.url()).not.toContain(newestSlug);
  });

  test('a tag page fits a 375 px screen', async ({ page }) => {
    await page.setViewportSize({ width: 375, height: 800 });
    await declineCookies(page);
    await page.goto(`/tag/${tagSlug}`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  });

  for (const theme of ['light', 'dark'] as const) {
    test(`axe finds nothing serious on the tag and author pages (${theme})`, async ({ page }) => {
      // Four pages, each with its islands revealed and a full axe run.
      test.setTimeout(120_000);
      await declineCookies(page);
      await page.addInitScript((value) => localStorage.setItem('meridian-theme', value), theme);
      for (const path of [`/tag/${tagSlug}`, `/tag/${tagSlug}/page/2`, `/author/${authorSlug}`, `/article/${newestSlug}`]) {
        await page.goto(path);
        await revealIslands(page);
        await expectNoSeriousViolations(page);
      }
    });
  }

  test('the Tags tab hides a tag and shows it again, with toasts, and is axe clean', { tag: '@store' }, async ({ page }) => {
    test.setTimeout(90_000);
    await signInPage(page);
    await page.goto('/admin?tab=tags');
    const row = page.getByTestId('tag-item').filter({ hasText: 'Coasts' });
    await expect(row).toContainText('13 articles');
    await expectNoSeriousViolations(page);
    await row.getByRole('button', { name: 'Hide tag Coasts' }).click();
    await expectToast(page, 'Tag hidden');
    await expect(row).toContainText('Hidden');
    await expect.poll(async () => (await page.request.get('/tag/coasts')).status(), { timeout: 20_000 }).toBe(404);
    await row.getByRole('button', { name: 'Show tag Coasts' }).click();
    await expectToast(page, 'Tag shown');
    await expect.poll(async () => (await page.request.get('/tag/coasts')).status(), { timeout: 20_000 }).toBe(200);
  });

  test('the Tags tab merges a stray spelling into the tag, and its old page redirects', { tag: '@store' }, async ({ page }) => {
    test.setTimeout(90_000);
    const stray = `Tydes ${token}`;
    const straySlug = stray.toLowerCase().replace(/[^a-z0-9]+/g, '-');
    await signInPage(page);
    const article = await createArticle(page.request, {
      title: `Tide misspelt ${token}`,
      dek: 'A feed brought the tag spelt another way.',
      tags: [stray],
      section: 'world',
      status: 'published',
    });
    created.push(article.id);
    await expect.poll(async () => (await page.request.get(`/tag/${straySlug}`)).status(), { timeout: 20_000 }).toBe(200);
    await page.goto('/admin?tab=tags');
    await page.getByTestId('merge-from').selectOption(straySlug);
    await page.getByTestId('merge-into').selectOption(tagSlug);
    await page.getByRole('button', { name: 'Merge', exact: true }).click();
    await expectToast(page, 'Tags merged');
    await expect(page.getByTestId('merged-list')).toContainText(`/tag/${straySlug} → /tag/${tagSlug}`);
    // The old page's files go as any unpublished page's do, by the publishing worker right after the answer.
    const oldPage = () => page.request.get(`/tag/${straySlug}`, { maxRedirects: 0 });
    await expect.poll(async () => (await oldPage()).status(), { timeout: 20_000 }).toBe(301);
    expect((await oldPage()).headers()['location']).toMatch(new RegExp(`/tag/${tagSlug}$`));
    await expect
      .poll(async () => (await (await page.request.get(`/tag/${tagSlug}`)).text()).includes(`Tide misspelt ${token}`), { timeout: 20_000 })
      .toBe(true);
  });
});
