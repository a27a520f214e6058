/** Reader shell: header, theme, mobile menu, footer, newsletter, toasts, cookie banner with the page-view beacon, and the 404 screen. */
import { expect, test } from './fixtures.ts';
import { createArticle, declineCookies, expectToast, signIn, uniqueToken, waitForIsland } from './reader-support.ts';
import { CONSENT_KEY } from '../../src/islands/consent/consent.ts';

test.describe('header', () => {
  test('brand, search button and section links; Login when signed out', async ({ page }) => {
    await declineCookies(page);
    await page.goto('/section/business');
    const header = page.locator('header.site-header');
    await expect(header.getByRole('link', { name: 'Meridian News', exact: true })).toHaveAttribute('href', '/');
    const nav = page.getByRole('navigation', { name: 'Main' });
    for (const [name, href] of [
      ['Home', '/'],
      ['World', '/section/world'],
      ['Business', '/section/business'],
      ['Politics', '/section/politics'],
      ['Tech', '/section/tech'],
      ['Sports', '/section/sports'],
      ['Culture', '/section/culture'],
      ['Opinion', '/section/opinion'],
      ['Search', '/search'],
    ]) {
      await expect(nav.getByRole('link', { name, exact: true })).toHaveAttribute('href', href!);
    }
    await expect(nav.getByRole('link', { name: 'Business', exact: true })).toHaveAttribute('aria-current', 'page');
    await waitForIsland(page, '.header-login');
    await expect(header.getByRole('link', { name: 'Login' })).toHaveAttribute('href', '/login');
    await expect(header.getByRole('link', { name: 'Admin' })).toHaveCount(0);
    await page.getByTestId('header-search').click();
    await expect(page).toHaveURL(/\/search$/);
    await expect(page.getByRole('heading', { name: 'Search Articles' })).toBeVisible();
  });

  test('signed in: Admin and Logout; Logout toasts and goes home', async ({ page }) => {
    await declineCookies(page);
    await signIn(page.request);
    await page.goto('/section/tech');
    const header = page.locator('header.site-header');
    await expect(header.getByRole('link', { name: 'Admin' })).toHaveAttribute('href', '/admin');
    await expect(header.getByRole('link', { name: 'Login' })).toHaveCount(0);
    await header.getByRole('button', { name: 'Logout' }).click();
    await expect(page).toHaveURL(/\/section\/world$/);
    await expectToast(page, 'Logged out');
    await expect(page.locator('header.site-header').getByRole('link', { name: 'Login' })).toBeVisible();
    expect((await page.request.get('/api/auth/me')).status()).toBe(401);
  });

  test('a failed logout says so and stays', async ({ page }) => {
    await declineCookies(page);
    await signIn(page.request);
    await page.goto('/section/tech');
    await page.route('**/api/auth/logout', (route) =>
      route.fulfill({ status: 500, body: '{"error":"down"}', contentType: 'application/json' }),
    );
    await page.locator('header.site-header').getByRole('button', { name: 'Logout' }).click();
    await expectToast(page, 'Logout failed', 'Failed to log out. Please try again.');
    await expect(page).toHaveURL(/\/section\/tech$/);
  });
});

test('theme: dark mode toggles, is remembered across navigation and applied before first paint', async ({ page }) => {
  await declineCookies(page);
  // Records the theme at the moment <body> is parsed: before first paint, before any module script.
  await page.addInitScript(() => {
    const observer = new MutationObserver(() => {
      if (!document.body) return;
      (window as unknown as { themeAtBody: string }).themeAtBody = document.documentElement.dataset.theme ?? 'light';
      observer.disconnect();
    });
    observer.observe(document, { childList: true, subtree: true });
  });
  await page.goto('/section/world');
  const html = page.locator('html');
  await expect(html).not.toHaveAttribute('data-theme', 'dark');
  const toggle = page.getByTestId('theme-toggle');
  await expect(toggle).toHaveAttribute('aria-pressed', 'false');
  await toggle.click();
  await expect(html).toHaveAttribute('data-theme', 'dark');
  await expect(toggle).toHaveAttribute('aria-pressed', 'true');
  const darkBackground = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Culture' }).click();
  await expect(page).toHaveURL(/\/section\/culture$/);
  expect(await page.evaluate(() => (window as unknown as { themeAtBody: string }).themeAtBody)).toBe('dark');
  expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe(darkBackground);
  await page.getByTestId('theme-toggle').click();
  await expect(html).not.toHaveAttribute('data-theme', 'dark');
  await page.reload();
  await expect(html).not.toHaveAttribute('data-theme', 'dark');
});

test.describe('mobile (390 px)', () => {
  test.use({ viewport: { width: 390, height: 844 } });

  test('the menu opens, closes, and closes on a link click', async ({ page }) => {
    await declineCookies(page);
    await page.goto('/section/world');
    const nav = page.getByRole('navigation', { name: 'Main' });
    const toggle = page.getByTestId('menu-toggle');
    await expect(nav.getByRole('link', { name: 'Sports' })).toBeHidden();
    await toggle.click();
    await expect(toggle).toHaveAttribute('aria-expanded', 'true');
    await expect(nav.getByRole('link', { name: 'Sports' })).toBeVisible();
    await toggle.click();
    await expect(nav.getByRole('link', { name: 'Sports' })).toBeHidden();
    await toggle.click();
    // Cancel the navigation (after the menu's own handler ran) so this page's menu can be observed.
    await page.evaluate(() => document.addEventListener('click', (event) => event.preventDefault()));
    await nav.getByRole('link', { name: 'Sports' }).click();
    await expect(toggle).toHaveAttribute('aria-expanded', 'false');
    await expect(nav.getByRole('link', { name: 'Sports' })).toBeHidden();
  });

  test('cards stack in one column', async ({ page }) => {
    await declineCookies(page);
    await page.goto('/section/world');
    const boxes = await page
      .getByTestId('article-card')
      .evaluateAll((cards) => cards.slice(0, 2).map((c) => c.getBoundingClientRect().left));
    expect(boxes[0]).toBe(boxes[1]);
  });
});

test('footer: tagline, link columns and copyright', async ({ page }) => {
  await declineCookies(page);
  await page.goto('/about');
  const footer = page.locator('footer.site-footer');
  await expect(footer.getByText('Your Gateway to Global Perspectives.')).toBeVisible();
  const columns: Record<string, string[]> = {
    About: ['/about', '/contact', '/careers', '/press'],
    Sections: ['/section/world', '/section/business', '/section/tech', '/section/sports'],
    Legal: ['/terms', '/privacy', '/cookies', '/accessibility'],
  };
  for (const [title, hrefs] of Object.entries(columns)) {
    const links = footer.getByRole('navigation', { name: `${title} links` }).getByRole('link');
    expect(await links.evaluateAll((as) => as.map((a) => a.getAttribute('href')))).toEqual(hrefs);
  }
  await expect(footer).toContainText(`© ${new Date().getFullYear()} Meridian News`);
});

test('newsletter: refuses an address without @, subscribes a valid one and clears the box', { tag: '@store' }, async ({ page }) => {
  await declineCookies(page);
  await page.goto('/about');
  const box = page.getByLabel('Email address');
  await box.scrollIntoViewIfNeeded();
  await waitForIsland(page, '#newsletter-email');
  const posts: string[] = [];
  page.on('request', (r) => {
    if (r.url().endsWith('/api/newsletter/subscribe')) posts.push(r.postData() ?? '');
  });
  await expect(box).toHaveAttribute('type', 'email');
  await box.fill('reader.example.com');
  await page.getByRole('button', { name: 'Subscribe' }).click();
  await expectToast(page, 'Invalid email', 'Please enter a valid email address.');
  await expect(page.getByTestId('toast')).toHaveAttribute('data-variant', 'destructive');
  expect(posts).toHaveLength(0);
  const address = `reader-${Date.now()}@example.com`;
  await box.fill(address);
  await page.getByRole('button', { name: 'Subscribe' }).click();
  await expectToast(page, 'Success!', "You've been subscribed to our newsletter.");
  await expect(box).toHaveValue('');
  // Double opt-in: the reader is told to confirm from their inbox.
  await expect(page.getByTestId('newsletter-check-inbox')).toHaveText(
    `Check your inbox: we sent a link to ${address} to confirm your subscription.`,
  );
  expect(posts).toEqual([JSON.stringify({ email: address })]);
});

test('newsletter: a server refusal shows its message', async ({ page }) => {
  await declineCookies(page);
  await page.goto('/about');
  await page.getByLabel('Email address').scrollIntoViewIfNeeded();
  await waitForIsland(page, '#newsletter-email');
  await page.route('**/api/newsletter/subscribe', (route) =>
    route.fulfill({ status: 429, contentType: 'application/json', body: JSON.stringify({ error: 'Too many requests, slow down.' }) }),
  );
  await page.getByLabel('Email address').fill('someone@example.com');
  await page.getByRole('button', { name: 'Subscribe' }).click();
  await expectToast(page, 'Subscription failed', 'Too many requests, slow down.');
  await expect(page.getByLabel('Email address')).toHaveValue('someone@example.com');
});

test.describe('toasts', () => {
  test('one at a time, the newest replaces the last; F8 focuses the region; a swipe right dismisses', async ({ page }) => {
    await declineCookies(page);
    await page.goto('/about');
    const box = page.getByLabel('Email address');
    await box.scrollIntoViewIfNeeded();
    await waitForIsland(page, '#newsletter-email');
    await box.fill('nobody');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await expectToast(page, 'Invalid email');
    await page.route('**/api/newsletter/subscribe', (route) => route.fulfill({ status: 500, body: '' }));
    await box.fill('a@b.example');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await expectToast(page, 'Subscription failed', 'Please try again later.');
    await expect(page.getByTestId('toast')).toHaveCount(1);

    await page.keyboard.press('F8');
    await expect(page.getByTestId('toast-region')).toBeFocused();

    const toast = page.getByTestId('toast');
    const box2 = (await toast.boundingBox())!;
    await page.mouse.move(box2.x + 20, box2.y + box2.height / 2);
    await page.mouse.down();
    await page.mouse.move(box2.x + 50, box2.y + box2.height / 2, { steps: 3 });
    await page.mouse.move(box2.x + 90, box2.y + box2.height / 2, { steps: 3 });
    await page.mouse.up();
    await expect(page.getByTestId('toast')).toHaveCount(0);
  });

  test('a short swipe does not dismiss', async ({ page }) => {
    await declineCookies(page);
    await page.goto('/about');
    const box = page.getByLabel('Email address');
    await box.scrollIntoViewIfNeeded();
    await waitForIsland(page, '#newsletter-email');
    await box.fill('nobody');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    const toast = page.getByTestId('toast');
    const b = (await toast.boundingBox())!;
    await page.mouse.move(b.x + 20, b.y + b.height / 2);
    await page.mouse.down();
    await page.mouse.move(b.x + 45, b.y + b.height / 2, { steps: 3 });
    await page.mouse.up();
    await expect(toast).toHaveCount(1);
  });
});

test.describe('cookie banner and page views', () => {
  test('the banner is in the static HTML: it shows with the page for a first visit, before any island code, and never for a returning reader', async ({
    page,
  }) => {
    // No bundled script at all: what shows is the prerendered HTML and the head script.
    await page.route(/\/_astro\/.*\.js$/, (route) => route.abort());
    await page.goto('/search');
    await expect(page.getByRole('region', { name: 'We value your privacy' })).toBeVisible();
    await page.evaluate((key) => localStorage.setItem(key, 'declined'), CONSENT_KEY);
    await page.goto('/search');
    await expect(page.getByRole('heading', { name: 'Search Articles' })).toBeVisible();
    await expect(page.getByRole('region', { name: 'We value your privacy' })).toHaveCount(0);
  });

  test('nothing is reported until Accept; the choice is remembered', async ({ page }) => {
    const beacons: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/api/analytics/pageview')) beacons.push(r.postData() ?? '');
    });
    await page.goto('/section/politics');
    const banner = page.getByRole('region', { name: 'We value your privacy' });
    await expect(banner).toBeVisible();
    // The banner paints with the page; its buttons work once its small script has run.
    await expect(banner).toHaveAttribute('data-ready', 'true');
    expect(beacons).toHaveLength(0);
    const sent = page.waitForRequest((r) => r.url().endsWith('/api/analytics/pageview'));
    await banner.getByRole('button', { name: 'Accept' }).click();
    expect(JSON.parse((await sent).postData() ?? '{}')).toEqual({ path: '/section/politics' });
    await expect(banner).toBeHidden();
    const next = page.waitForRequest((r) => r.url().endsWith('/api/analytics/pageview'));
    await page.goto('/section/sports');
    expect(JSON.parse((await next).postData() ?? '{}')).toEqual({ path: '/section/sports' });
    await expect(page.getByRole('region', { name: 'We value your privacy' })).toHaveCount(0);
  });

  test('Decline hides the banner and sends nothing, also on the next page', async ({ page }) => {
    const beacons: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/api/analytics/pageview')) beacons.push(r.url());
    });
    await page.goto('/section/culture');
    await expect(page.locator('.cookie-banner')).toHaveAttribute('data-ready', 'true');
    await page.getByRole('button', { name: 'Decline' }).click();
    await expect(page.getByRole('region', { name: 'We value your privacy' })).toHaveCount(0);
    await page.goto('/about');
    await waitForIsland(page, '[data-testid=toast-region]');
    await expect(page.getByRole('region', { name: 'We value your privacy' })).toHaveCount(0);
    expect(await page.evaluate(() => localStorage.getItem('meridian-cookie-consent'))).toBe('declined');
    expect(beacons).toHaveLength(0);
  });
});

test.describe('not found', () => {
  for (const path of ['/no-such-page', '/section/markets', '/section/world/page/999']) {
    test(`${path} answers 404 with the not-found screen`, async ({ page }) => {
      const response = await page.goto(path);
      expect(response?.status()).toBe(404);
      await expect(page.getByRole('heading', { level: 1 })).toHaveText('404 Page Not Found');
      await expect(page.getByText('Did you forget to add the page to the router?')).toBeVisible();
      await expect(page).toHaveTitle('404 Page Not Found | Meridian News');
    });
  }

  test('/article/{unknown} answers 404 with the Article Not Found screen', async ({ page }) => {
    const response = await page.goto('/article/no-such-article-slug');
    expect(response?.status()).toBe(404);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Article Not Found');
    await expect(page.getByText("The article you're looking for doesn't exist.")).toBeVisible();
    await expect(page).toHaveTitle('Article Not Found | Meridian News');
    await expect(page.getByText('Did you forget to add the page to the router?')).toHaveCount(0);
  });

  test('an article answers Article Not Found (404) once it is unpublished', { tag: '@store' }, async ({ page }) => {
    await declineCookies(page);
    await signIn(page.request);
    const article = await createArticle(page.request, { title: `${uniqueToken('gone')} Short-lived story`, status: 'published' });
    await expect.poll(async () => (await page.request.get(`/article/${article.slug}`)).status()).toBe(200);
    expect((await page.request.put(`/api/articles/${article.id}`, { data: { status: 'archived' } })).status()).toBe(200);
    await expect.poll(async () => (await page.request.get(`/article/${article.slug}`)).status()).toBe(404);
    const response = await page.goto(`/article/${article.slug}`);
    expect(response?.status()).toBe(404);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Article Not Found');
  });
});

test('text is set in the self-hosted fonts, loaded from the site, whatever the machine has installed', async ({ page }) => {
  await declineCookies(page);
  const fontRequests: string[] = [];
  page.on('request', (request) => {
    if (request.resourceType() === 'font') fontRequests.push(new URL(request.url()).pathname);
  });
  await page.goto('/section/world');
  await page.evaluate(() => document.fonts.ready);
  const loaded = await page.evaluate(() => [...document.fonts].filter((f) => f.status === 'loaded').map((f) => `${f.family} ${f.style}`));
  expect(
    loaded.some((f) => /^"?Inter\b.* normal$/.test(f)),
    loaded.join(', '),
  ).toBe(true);
  expect(
    loaded.some((f) => /^"?Source Serif 4\b.* normal$/.test(f)),
    loaded.join(', '),
  ).toBe(true);
  expect(fontRequests.length).toBeGreaterThan(0);
  for (const font of fontRequests) expect(font).toMatch(/^\/_astro\/fonts\/[^/]+\.woff2$/);
  // Both upright faces are preloaded, so they are there for the first paint of the headline and the nav.
  expect(await page.locator('link[rel=preload][as=font][type="font/woff2"]').count()).toBe(2);
  const bodyFont = await page.evaluate(() => getComputedStyle(document.body).fontFamily);
  expect(bodyFont).toMatch(/^"?Inter/);
});
