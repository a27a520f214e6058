/** Section listings: titles and descriptions, section bar, ticker, card contents, and path-based pagination. */
import { expect, test } from './fixtures.ts';
import { createArticle, declineCookies, findArticle, listPublished, signIn, uniqueToken } from './reader-support.ts';

const SECTIONS: Record<string, string> = {
  world: 'World News',
  business: 'Business',
  politics: 'Politics',
  tech: 'Technology',
  sports: 'Sports',
  culture: 'Culture',
  opinion: 'Opinion',
  home: 'Top Stories',
};

test('every section has its title, description and the section bar', async ({ page }) => {
  await declineCookies(page);
  for (const [section, title] of Object.entries(SECTIONS)) {
    const response = await page.goto(`/section/${section}`);
    expect(response?.status()).toBe(200);
    await expect(page).toHaveTitle(`${title} | Meridian News`);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(title);
    const description = await page.locator('meta[name="description"]').getAttribute('content');
    expect(description?.length).toBeGreaterThan(40);
    await expect(page.locator('main')).toContainText(description!);
    expect(await page.locator('link[rel="canonical"]').getAttribute('href')).toMatch(new RegExp(`/section/${section}$`));
    const bar = page.getByRole('navigation', { name: 'Sections', exact: true });
    await expect(bar.getByRole('link')).toHaveText(['World', 'Business', 'Politics', 'Tech', 'Sports', 'Culture', 'Opinion']);
    if (section !== 'home') await expect(bar.locator('[aria-current="page"]')).toHaveAttribute('href', `/section/${section}`);
  }
});

test("the grid shows the section's newest published articles, three across on desktop", { tag: '@smoke' }, async ({ page, request }) => {
  await declineCookies(page);
  const newest = await listPublished(request, { section: 'culture', pageSize: 12 });
  await page.goto('/section/culture');
  const titles = page.getByTestId('article-card').locator('.card-title');
  await expect(titles).toHaveText(newest.map((a) => a.title));
  const tops = await page
    .getByTestId('article-card')
    .evaluateAll((cards) => cards.slice(0, 4).map((c) => Math.round(c.getBoundingClientRect().top)));
  expect(tops[0]).toBe(tops[1]);
  expect(tops[1]).toBe(tops[2]);
  expect(tops[3]).toBeGreaterThan(tops[0]!);
});

test('a card shows every element of the article', async ({ page, request }) => {
  const article = await findArticle(request, (a) => Boolean(a.sourceUrl && a.dek && a.heroImage));
  await declineCookies(page);
  await page.goto(`/section/${article.section}`);
  const card = page.getByTestId('article-card').filter({ has: page.getByRole('link', { name: article.title, exact: true }) });
  await expect(card).toHaveCount(1);
  const image = card.getByTestId('card-image');
  await expect(image).toHaveAttribute('srcset', /400w.*800w.*1200w/);
  await expect(image).toHaveAttribute('sizes', /.+/);
  await expect(image).toHaveAttribute('width', '1200');
  await expect(image).toHaveAttribute('height', '675');
  await expect(card.getByTestId('card-section')).toHaveAttribute('href', `/section/${article.section}`);
  await expect(card.locator('.badge-breaking')).toHaveCount(article.isBreaking ? 1 : 0);
  await expect(card.locator('.badge-pick')).toHaveCount(article.isEditorsPick ? 1 : 0);
  await expect(card.getByRole('link', { name: article.title, exact: true })).toHaveAttribute('href', `/article/${article.slug}`);
  await expect(card.locator('.card-title')).toHaveCSS('-webkit-line-clamp', '3');
  await expect(card.locator('.card-dek')).toHaveText(article.dek!);
  await expect(card.locator('.card-dek')).toHaveCSS('-webkit-line-clamp', '2');
  await expect(card.getByTestId('card-source')).toHaveText(article.sourceLabel!);
  const time = card.locator('time');
  await expect(time).toHaveAttribute('datetime', article.publishedAt!);
  await expect(time).toHaveText(/ ago$|^yesterday$|^just now$|^last /);
  await expect(card.getByTestId('card-reading-time')).toHaveText(`${article.readingTime} min read`);
  await expect(card.getByRole('link', { name: 'Read Article →' })).toHaveAttribute('href', `/article/${article.slug}`);
  const source = card.getByRole('link', { name: /View Source →/ });
  await expect(source).toHaveAttribute('href', article.sourceUrl!);
  await expect(source).toHaveAttribute('target', '_blank');
  await expect(source).toHaveAttribute('rel', 'noopener noreferrer');
});

test('cards without a source have no View Source link; without a hero image they show the default image', async ({ page, request }) => {
  const noSource = await findArticle(request, (a) => !a.sourceUrl);
  const noImage = await findArticle(request, (a) => !a.heroImage);
  await declineCookies(page);
  await page.goto(`/section/${noSource.section}`);
  const card = page.getByTestId('article-card').filter({ has: page.getByRole('link', { name: noSource.title, exact: true }) });
  await expect(card.getByRole('link', { name: 'Read Article →' })).toBeVisible();
  await expect(card.getByRole('link', { name: /View Source/ })).toHaveCount(0);
  await page.goto(`/section/${noImage.section}`);
  const plain = page.getByTestId('article-card').filter({ has: page.getByRole('link', { name: noImage.title, exact: true }) });
  await expect(plain.getByTestId('card-image')).toHaveAttribute('src', '/brand/default-hero.png');
  expect((await page.request.get('/brand/default-hero.png')).status()).toBe(200);
});

test('the breaking ticker lists breaking articles', async ({ page, request }) => {
  const breaking = await listPublished(request, { isBreaking: 'true', limit: 10 });
  expect(breaking.length).toBeGreaterThan(0);
  await declineCookies(page);
  const tickerCall = page.waitForRequest(
    (r) => r.url().includes('/api/articles?') && r.url().includes('isBreaking=true') && r.url().includes('limit=10'),
  );
  await page.goto('/section/sports');
  await tickerCall;
  const ticker = page.getByTestId('breaking-ticker');
  await expect(ticker.getByRole('link')).toHaveText(breaking.map((a) => a.title));
  await expect(ticker.getByRole('link').first()).toHaveAttribute('href', `/article/${breaking[0]!.slug}`);
});

test('one page of articles: no pagination', async ({ page, request }) => {
  const count = (await listPublished(request, { section: 'opinion' })).length;
  expect(count).toBeLessThanOrEqual(12);
  await declineCookies(page);
  await page.goto('/section/opinion');
  await expect(page.getByRole('navigation', { name: 'Opinion pages' })).toHaveCount(0);
  expect((await page.request.get('/section/opinion/page/2')).status()).toBe(404);
});

test.describe('paging', () => {
  const created: string[] = [];

  test.afterAll(async ({ playwright, baseURL }) => {
    const api = await playwright.request.newContext({ baseURL });
    await signIn(api);
    for (const id of created) await api.delete(`/api/articles/${id}`);
    await api.dispose();
  });

  test(
    '12 a page, path-based pages, Previous/Next disabled at the ends, out of range is 404',
    { tag: '@store' },
    async ({ page, request }) => {
      await signIn(request);
      const existing = (await listPublished(request, { section: 'politics' })).length;
      const needed = Math.max(0, 13 - existing);
      const token = uniqueToken('paging');
      for (let i = 0; i < needed; i++) {
        const article = await createArticle(request, {
          title: `Paging check ${token} ${i}`,
          section: 'politics',
          status: 'published',
          dek: 'A filler story for the paging test.',
        });
        created.push(article.id);
      }
      const total = (await listPublished(request, { section: 'politics' })).length;
      const pages = Math.ceil(total / 12);
      // Publishing regenerates the listing pages in the background.
      await expect.poll(async () => (await page.request.get(`/section/politics/page/${pages}`)).status(), { timeout: 20_000 }).toBe(200);

      await declineCookies(page);
      await page.goto('/section/politics');
      await expect(page.getByTestId('article-card')).toHaveCount(12);
      const pager = page.getByRole('navigation', { name: 'Politics pages' });
      await expect(pager.getByText('← Previous')).toHaveAttribute('aria-disabled', 'true');
      await expect(pager.getByRole('link', { name: 'Page 1' })).toHaveAttribute('aria-current', 'page');
      await expect(pager.getByRole('link', { name: 'Page 2' })).toHaveAttribute('href', '/section/politics/page/2');
      await pager.getByRole('link', { name: 'Next →' }).click();
      await expect(page).toHaveURL(/\/section\/politics\/page\/2$/);
      await expect(page).toHaveTitle(`Politics – Page 2 | Meridian News`);
      const pager2 = page.getByRole('navigation', { name: 'Politics pages' });
      await expect(pager2.getByRole('link', { name: 'Page 2' })).toHaveAttribute('aria-current', 'page');
      await expect(page.getByTestId('article-card')).toHaveCount(pages === 2 ? total - 12 : 12);
      if (pages === 2) await expect(pager2.getByText('Next →')).toHaveAttribute('aria-disabled', 'true');
      await pager2.getByRole('link', { name: '← Previous' }).click();
      await expect(page).toHaveURL(/\/section\/politics$/);
      expect((await page.request.get(`/section/politics/page/${pages + 1}`)).status()).toBe(404);
      expect((await page.request.get('/section/politics/page/1')).status()).toBe(404);
    },
  );

  test(
    'many pages: the collapsed form with ellipses, numbers counted from the newest on stable archive files',
    { tag: '@store' },
    async ({ page, request }) => {
      test.setTimeout(180_000);
      await signIn(request);
      const existing = (await listPublished(request, { section: 'politics', pageSize: 100 })).length;
      const needed = Math.max(0, 12 * 8 + 3 - existing);
      const token = uniqueToken('many-pages');
      for (let i = 0; i < needed; i++) {
        const article = await createArticle(request, {
          title: `Archive filler ${token} ${i}`,
          section: 'politics',
          status: 'published',
          dek: 'A filler story for the paging test.',
        });
        created.push(article.id);
      }
      const total = Math.ceil((existing + needed) / 12);
      expect(total).toBeGreaterThan(7);
      await expect
        .poll(async () => (await (await page.request.get('/section/politics/pages.json')).json()).pages, { timeout: 60_000 })
        .toBe(total);
      await expect.poll(async () => (await page.request.get(`/section/politics/page/${total}`)).status(), { timeout: 60_000 }).toBe(200);

      await declineCookies(page);
      await page.goto('/section/politics');
      const pager = page.getByRole('navigation', { name: 'Politics pages' });
      await expect(pager.getByRole('link', { name: /^Page \d+$/ })).toHaveText(['1', '2', '3', '4', '5', String(total)]);
      await expect(pager.locator('.ellipsis')).toHaveCount(1);
      await expect(pager.getByText('← Previous')).toHaveAttribute('aria-disabled', 'true');
      // Reader page 2 is the newest archive file: files are numbered from the oldest, so full ones never move.
      await expect(pager.getByRole('link', { name: 'Page 2' })).toHaveAttribute('href', `/section/politics/page/${total}`);

      await pager.getByRole('link', { name: 'Page 5' }).click();
      await expect(page).toHaveURL(new RegExp(`/section/politics/page/${total - 3}$`));
      const pager5 = page.getByRole('navigation', { name: 'Politics pages' });
      await expect(pager5.getByRole('link', { name: /^Page \d+$/ })).toHaveText(['1', '4', '5', '6', String(total)]);
      await expect(pager5.locator('.ellipsis')).toHaveCount(2);
      await expect(pager5.getByRole('link', { name: 'Page 5' })).toHaveAttribute('aria-current', 'page');
      await expect(page.locator('[data-listing-eyebrow]')).toHaveText(`Page 5 of ${total}`);
      await expect(page).toHaveTitle('Politics – Page 5 | Meridian News');
      await expect(page.getByTestId('article-card')).toHaveCount(12);

      await pager5.getByRole('link', { name: `Page ${total}` }).click();
      await expect(page).toHaveURL(/\/section\/politics\/page\/2$/);
      const last = page.getByRole('navigation', { name: 'Politics pages' });
      await expect(last.getByRole('link', { name: `Page ${total}` })).toHaveAttribute('aria-current', 'page');
      await expect(last.getByRole('link', { name: /^Page \d+$/ })).toHaveText(['1', ...[4, 3, 2, 1, 0].map((n) => String(total - n))]);
      await expect(last.getByText('Next →')).toHaveAttribute('aria-disabled', 'true');
      await expect(page.getByTestId('article-card')).toHaveCount(12);
      await last.getByRole('link', { name: '← Previous' }).click();
      await expect(page).toHaveURL(new RegExp(`/section/politics/page/3$`));
      await expect(
        page.getByRole('navigation', { name: 'Politics pages' }).getByRole('link', { name: `Page ${total - 1}` }),
      ).toHaveAttribute('aria-current', 'page');

      // An archive file's HTML never prints the page count (that would rewrite it on every new page).
      const html = await (await page.request.get(`/section/politics/page/${total - 3}`)).text();
      expect(html).not.toContain(`of ${total}`);
      for (const outside of [total + 1, 1, 0]) expect((await page.request.get(`/section/politics/page/${outside}`)).status()).toBe(404);
    },
  );
});
