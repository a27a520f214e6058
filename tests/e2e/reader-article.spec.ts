/** Article page: metadata, badges and byline, votes, share popups, copy link, comments with validation and moderation. */
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import type { Article } from '../../src/schemas/article.ts';
import { declineCookies, expectToast, findArticle, signIn, uniqueToken, waitForIsland } from './reader-support.ts';

let article: Article;

test.beforeAll(async ({ request }) => {
  // A demo article with the optional parts: dek and source link.
  article = await findArticle(request, (a) => Boolean(a.dek && a.sourceUrl && a.sourceLabel));
});

async function openArticle(page: Page): Promise<void> {
  await declineCookies(page);
  const response = await page.goto(`/article/${article.slug}`);
  expect(response?.status()).toBe(200);
}

test('head metadata: title, description, canonical, Open Graph, Twitter and JSON-LD', async ({ page, site }) => {
  await openArticle(page);
  const url = `${site.siteUrl}/article/${article.slug}`;
  await expect(page).toHaveTitle(`${article.title} | Meridian News`);
  const meta = (selector: string) => page.locator(selector).getAttribute('content');
  expect(await meta('meta[name="description"]')).toBe(article.dek);
  expect(await page.locator('link[rel="canonical"]').getAttribute('href')).toBe(url);
  expect(await meta('meta[property="og:type"]')).toBe('article');
  expect(await meta('meta[property="og:title"]')).toBe(article.title);
  expect(await meta('meta[property="og:url"]')).toBe(url);
  expect(await meta('meta[property="og:image"]')).toMatch(new RegExp(`^${site.siteUrl}/`));
  expect(await meta('meta[name="twitter:card"]')).toBe('summary_large_image');
  expect(await meta('meta[name="twitter:title"]')).toBe(article.title);
  const ld = JSON.parse((await page.locator('script[type="application/ld+json"]').textContent()) ?? '{}');
  expect(ld).toMatchObject({
    '@context': 'https://schema.org',
    '@type': 'NewsArticle',
    headline: article.title,
    description: article.dek,
    datePublished: article.publishedAt,
    author: { name: article.authorName || article.sourceLabel },
    publisher: { name: 'Meridian News' },
  });
});

test(
  'header of the article: badges, title, dek, byline, reading time, bookmark; body and search-index attributes',
  { tag: '@smoke' },
  async ({ page }) => {
    await openArticle(page);
    const main = page.locator('main');
    const body = page.getByTestId('article');
    await expect(main.getByRole('heading', { level: 1 })).toHaveText(article.title);
    await expect(main.locator('.badges .badge').first()).toHaveAttribute('href', `/section/${article.section}`);
    await expect(main.locator('.badges .badge-breaking')).toHaveCount(article.isBreaking ? 1 : 0);
    await expect(main.locator('.badges .badge-pick')).toHaveCount(article.isEditorsPick ? 1 : 0);
    await expect(page.getByTestId('article').locator('p.dek[data-pagefind-meta="dek"]')).toHaveText(article.dek!);
    if (article.authorName) await expect(main.locator('.byline')).toContainText(`By ${article.authorName}`);
    await expect(main.locator('.byline')).toContainText(article.sourceLabel!);
    await expect(main.locator('.byline')).toContainText(`${article.readingTime} min read`);
    const time = main.locator('.byline time');
    await expect(time).toHaveAttribute('datetime', article.publishedAt!);
    await expect(time).toHaveText(/ago|yesterday|just now|last|now/);
    await expect(main.getByRole('button', { name: 'Bookmark' })).toBeVisible();
    await expect(body.locator('.hero img')).toHaveAttribute('width', /\d+/);
    await expect(body.locator('.hero img')).toHaveAttribute('height', /\d+/);
    expect(await body.locator('.article-body').innerHTML()).toBe(article.bodyHtml);
    await expect(body.getByRole('link', { name: /View Source/ })).toHaveAttribute('href', article.sourceUrl!);
    // Search index hints for Pagefind.
    await expect(body).toHaveAttribute('data-pagefind-body', '');
    await expect(body.locator(`[data-pagefind-filter="section:${article.section}"]`)).toHaveCount(1);
    await expect(body.locator('h1')).toHaveAttribute('data-pagefind-meta', 'title');
    await expect(body.locator('.dek')).toHaveAttribute('data-pagefind-meta', 'dek');
    await expect(page.locator('header.site-header')).toHaveAttribute('data-pagefind-ignore', '');
    await expect(page.locator('footer.site-footer')).toHaveAttribute('data-pagefind-ignore', '');
  },
);

test("Breaking and Editor's Pick badges", async ({ page, request }) => {
  const breaking = await findArticle(request, (a) => a.isBreaking);
  const pick = await findArticle(request, (a) => a.isEditorsPick);
  await declineCookies(page);
  await page.goto(`/article/${breaking.slug}`);
  await expect(page.locator('main .badges')).toContainText('Breaking');
  await page.goto(`/article/${pick.slug}`);
  await expect(page.locator('main .badges')).toContainText("Editor's Pick");
});

test.describe('votes', () => {
  test(
    'counts come from the API; like, then dislike moves the vote; buttons wait for the answer',
    { tag: '@store' },
    async ({ page, request }) => {
      const before = (await (await request.get(`/api/articles/${article.id}/vote`)).json()) as { likes: number; dislikes: number };
      await openArticle(page);
      const like = page.getByTestId('like-button');
      const dislike = page.getByTestId('dislike-button');
      await like.scrollIntoViewIfNeeded();
      await expect(page.getByTestId('like-count')).toHaveText(before.likes.toLocaleString('en-US'));
      await expect(page.getByTestId('dislike-count')).toHaveText(before.dislikes.toLocaleString('en-US'));

      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      await page.route(`**/api/articles/${article.id}/like`, async (route) => {
        await gate;
        await route.continue();
      });
      await like.click();
      await expect(like).toBeDisabled();
      await expect(dislike).toBeDisabled();
      release();
      await expectToast(page, 'Thanks for your feedback!', 'Your like has been recorded (10 points).');
      await expect(page.getByTestId('like-count')).toHaveText((before.likes + 1).toLocaleString('en-US'));
      await expect(like).toBeEnabled();
      await expect(like).toHaveAttribute('aria-pressed', 'true');

      await dislike.click();
      await expectToast(page, 'Thanks for your feedback!', 'Your feedback has been recorded (1 point).');
      await expect(page.getByTestId('dislike-count')).toHaveText((before.dislikes + 1).toLocaleString('en-US'));
      await expect(page.getByTestId('like-count')).toHaveText(before.likes.toLocaleString('en-US'));
      await expect(dislike).toHaveAttribute('aria-pressed', 'true');
    },
  );

  test('failures say which vote was lost', async ({ page }) => {
    await openArticle(page);
    await page.getByTestId('like-button').scrollIntoViewIfNeeded();
    await expect(page.getByTestId('like-count')).toHaveText(/\d/);
    await page.route('**/api/articles/*/like', (route) => route.fulfill({ status: 503, body: '' }));
    await page.route('**/api/articles/*/dislike', (route) => route.fulfill({ status: 503, body: '' }));
    await page.getByTestId('like-button').click();
    await expectToast(page, 'Error', 'Failed to record your like.');
    await page.getByTestId('dislike-button').click();
    await expectToast(page, 'Error', 'Failed to record your feedback.');
  });
});

test.describe('share', () => {
  for (const [network, host] of [
    ['Facebook', 'www.facebook.com'],
    ['LinkedIn', 'www.linkedin.com'],
    ['TikTok', 'www.tiktok.com'],
  ] as const) {
    test(`${network} opens a 600x400 popup with the absolute article URL`, async ({ browser, baseURL, site }) => {
      // A context without viewport emulation, so the popup gets the window size the page asks for.
      const context = await browser.newContext({ viewport: null, deviceScaleFactor: undefined, baseURL });
      try {
        await context.route(`https://${host}/**`, (route) => route.fulfill({ contentType: 'text/html', body: '<title>share</title>' }));
        const page = await context.newPage();
        await openArticle(page);
        await waitForIsland(page, '[data-testid=share-bar]');
        const popupOpened = page.waitForEvent('popup');
        await page.getByRole('button', { name: `Share on ${network}` }).click();
        const popup = await popupOpened;
        await popup.waitForLoadState();
        const target = new URL(popup.url());
        expect(target.host).toBe(host);
        expect([...target.searchParams.values()]).toContain(`${site.siteUrl}/article/${article.slug}`);
        const size = await popup.evaluate(() => ({ width: window.innerWidth, height: window.innerHeight }));
        expect(size.width).toBe(600);
        // Headless Chromium may round the content height down by a pixel.
        expect(Math.abs(size.height - 400)).toBeLessThanOrEqual(1);
      } finally {
        await context.close();
      }
    });
  }
});

test('copy link puts the absolute URL on the clipboard and shows a check for a moment', async ({ page, context, site }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await openArticle(page);
  await waitForIsland(page, '[data-testid=share-bar]');
  await page.getByRole('button', { name: 'Copy link' }).click();
  await expectToast(page, 'Link copied!', 'Article link has been copied to clipboard.');
  await expect(page.getByTestId('copy-check')).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`${site.siteUrl}/article/${article.slug}`);
  // The check returns to the link icon (after 2 s).
  await expect(page.getByTestId('copy-icon')).toBeVisible();
});

test('copy link failure toasts', async ({ page }) => {
  await openArticle(page);
  await waitForIsland(page, '[data-testid=share-bar]');
  await page.evaluate(() => {
    Object.defineProperty(navigator, 'clipboard', { value: { writeText: () => Promise.reject(new Error('denied')) } });
  });
  await page.getByRole('button', { name: 'Copy link' }).click();
  await expectToast(page, 'Failed to copy', 'Please try again.');
});

test.describe('comments', () => {
  test('validation, submission, and the new comment in the list', { tag: '@store' }, async ({ page }) => {
    await openArticle(page);
    const form = page.getByRole('form', { name: 'Leave a comment' });
    await form.scrollIntoViewIfNeeded();
    await waitForIsland(page, '[data-testid=comments]');
    const posts: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && r.url().endsWith(`/api/articles/${article.id}/comments`)) posts.push(r.postData() ?? '');
    });
    await form.getByRole('button', { name: 'Post Comment' }).click();
    await expectToast(page, 'Missing fields', 'Please fill in all fields.');
    await form.getByLabel('Name').fill('Ada Reader');
    await form.getByLabel('Email').fill('ada.example.com');
    await form.getByLabel('Comment').fill('A thoughtful note.');
    await form.getByRole('button', { name: 'Post Comment' }).click();
    await expectToast(page, 'Invalid email', 'Please enter a valid email address.');
    expect(posts).toHaveLength(0);

    const text = `Clear reporting, thank you ${uniqueToken('c')}`;
    await form.getByLabel('Email').fill('ada@example.com');
    await form.getByLabel('Comment').fill(text);
    await form.getByRole('button', { name: 'Post Comment' }).click();
    await expectToast(page, 'Comment submitted');
    await expect(form.getByLabel('Name')).toHaveValue('');
    await expect(form.getByLabel('Email')).toHaveValue('');
    await expect(form.getByLabel('Comment')).toHaveValue('');
    const comment = page.getByTestId('comment').filter({ hasText: text });
    await expect(comment).toContainText('Ada Reader');
    await expect(comment.getByRole('button')).toHaveCount(0);
    expect(JSON.parse(posts[0]!)).toMatchObject({ authorName: 'Ada Reader', authorEmail: 'ada@example.com', content: text });
  });

  test('a refused comment shows the server message', async ({ page }) => {
    await openArticle(page);
    const form = page.getByRole('form', { name: 'Leave a comment' });
    await form.scrollIntoViewIfNeeded();
    await waitForIsland(page, '[data-testid=comments]');
    await page.route(`**/api/articles/${article.id}/comments`, (route) =>
      route.request().method() === 'POST'
        ? route.fulfill({
            status: 429,
            contentType: 'application/json',
            body: JSON.stringify({ error: 'Too many comments. Try again in a minute.' }),
          })
        : route.continue(),
    );
    await form.getByLabel('Name').fill('Bo');
    await form.getByLabel('Email').fill('bo@example.com');
    await form.getByLabel('Comment').fill('Hello');
    await form.getByRole('button', { name: 'Post Comment' }).click();
    await expectToast(page, 'Failed to submit comment', 'Too many comments. Try again in a minute.');
    await expect(form.getByLabel('Comment')).toHaveValue('Hello');
  });

  test('signed-in admins hide, show and delete comments', { tag: '@store' }, async ({ page, request }) => {
    const text = `Moderate me ${uniqueToken('m')}`;
    const created = await request.post(`/api/articles/${article.id}/comments`, {
      data: { authorName: 'Mo', authorEmail: 'mo@example.com', content: text },
    });
    expect(created.status()).toBe(201);
    await declineCookies(page);
    await signIn(page.request);
    await page.goto(`/article/${article.slug}`);
    await page.getByTestId('comments').scrollIntoViewIfNeeded();
    const comment = page.getByTestId('comment').filter({ hasText: text });
    await comment.getByRole('button', { name: 'Hide' }).click();
    await expectToast(page, 'Comment updated');
    await expect(comment.getByText('Hidden', { exact: true })).toBeVisible();
    const publicList = await (await request.get(`/api/articles/${article.id}/comments`)).json();
    expect(JSON.stringify(publicList)).not.toContain(text);
    await comment.getByRole('button', { name: 'Show' }).click();
    await expectToast(page, 'Comment updated');
    await expect(comment.getByText('Hidden', { exact: true })).toHaveCount(0);

    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await comment.getByRole('button', { name: 'Delete' }).click();
    await expectToast(page, 'Comment deleted');
    expect(asked).toMatch(/delete/i);
    await expect(comment).toHaveCount(0);
  });

  test('moderation failures toast', async ({ page, request }) => {
    const text = `Failing moderation ${uniqueToken('f')}`;
    expect(
      (
        await request.post(`/api/articles/${article.id}/comments`, {
          data: { authorName: 'Fi', authorEmail: 'fi@example.com', content: text },
        })
      ).status(),
    ).toBe(201);
    await declineCookies(page);
    await signIn(page.request);
    await page.goto(`/article/${article.slug}`);
    await page.getByTestId('comments').scrollIntoViewIfNeeded();
    const comment = page.getByTestId('comment').filter({ hasText: text });
    await page.route('**/api/comments/**', (route) => route.fulfill({ status: 500, body: '' }));
    await comment.getByRole('button', { name: 'Hide' }).click();
    await expectToast(page, 'Error', 'Failed to update comment.');
    page.once('dialog', (dialog) => void dialog.accept());
    await comment.getByRole('button', { name: 'Delete' }).click();
    await expectToast(page, 'Error', 'Failed to delete comment.');
    await expect(comment).toHaveCount(1);
  });
});
