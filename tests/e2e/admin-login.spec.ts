/** Sign-in screen and the server-side guards of the back office. */
import { E2E_ADMIN, expect, test } from './fixtures.ts';
import { createArticle, declineCookies, expectToast, gotoAdmin, signInPage, uniqueToken } from './admin-helpers.ts';

test.beforeEach(async ({ page }) => {
  await declineCookies(page);
});

test.describe('guards without a session', () => {
  test('/admin and /admin/editor answer a redirect to /login', async ({ page, request }) => {
    for (const path of ['/admin', '/admin/editor', '/admin/editor/some-id', '/admin?tab=comments']) {
      const response = await request.get(path, { maxRedirects: 0 });
      expect(response.status(), path).toBe(302);
      expect(new URL(response.headers().location!, 'http://x').pathname, path).toBe('/login');
    }
    await gotoAdmin(page, '/admin');
    await expect(page).toHaveURL(/\/login$/);
    await gotoAdmin(page, '/admin/editor');
    await expect(page).toHaveURL(/\/login\?next=%2Fadmin%2Feditor$|\/login\?next=\/admin\/editor$/);
    await expect(page.getByRole('button', { name: 'Log In' })).toBeVisible();
  });
});

test.describe('login form', () => {
  test('blank fields show Missing fields and send nothing', async ({ page }) => {
    await gotoAdmin(page, '/login');
    let loginCalls = 0;
    page.on('request', (req) => {
      if (req.url().endsWith('/api/auth/login')) loginCalls++;
    });
    await page.getByRole('button', { name: 'Log In' }).click();
    await expectToast(page, 'Missing fields', 'Please enter both username and password.');
    await page.getByLabel('Username').fill('   ');
    await page.getByLabel('Password', { exact: true }).fill('something');
    await page.getByRole('button', { name: 'Log In' }).click();
    await expectToast(page, 'Missing fields', 'Please enter both username and password.');
    expect(loginCalls).toBe(0);
    await expect(page).toHaveURL(/\/login$/);
  });

  test('the password can be shown and hidden', async ({ page }) => {
    await gotoAdmin(page, '/login');
    const password = page.getByLabel('Password', { exact: true });
    await password.fill('secret-value');
    await expect(password).toHaveAttribute('type', 'password');
    await page.getByRole('button', { name: 'Show password' }).click();
    await expect(password).toHaveAttribute('type', 'text');
    await page.getByRole('button', { name: 'Hide password' }).click();
    await expect(password).toHaveAttribute('type', 'password');
  });

  test('wrong credentials show Login failed and stay on /login', async ({ page }) => {
    await gotoAdmin(page, '/login');
    await page.getByLabel('Username').fill(E2E_ADMIN.username);
    await page.getByLabel('Password', { exact: true }).fill('not-the-password');
    await page.getByRole('button', { name: 'Log In' }).click();
    await expectToast(page, 'Login failed', 'Invalid username or password.');
    await expect(page.locator('#login-problem')).toHaveText('Invalid username or password.');
    await expect(page).toHaveURL(/\/login$/);
    // No session was created.
    expect((await page.request.get('/api/auth/me')).status()).toBe(401);
  });

  test('correct credentials welcome the editor on /admin; /login then goes to /admin', { tag: ['@store', '@smoke'] }, async ({ page }) => {
    await gotoAdmin(page, '/login');
    await page.getByLabel('Username').fill(E2E_ADMIN.username);
    await page.getByLabel('Password', { exact: true }).fill(E2E_ADMIN.password);
    await page.getByRole('button', { name: 'Log In' }).click();
    await expect(page).toHaveURL(/\/admin$/);
    await expectToast(page, 'Welcome back!');
    await expect(page.getByRole('heading', { name: 'Admin Dashboard' })).toBeVisible();

    const response = await page.request.get('/login', { maxRedirects: 0 });
    expect(response.status()).toBe(302);
    expect(response.headers().location).toBe('/admin');
    await page.goto('/login');
    await expect(page).toHaveURL(/\/admin$/);
  });

  test('signing in from a guarded editor link returns to it', async ({ page, browser, baseURL }) => {
    const admin = await browser.newContext({ baseURL });
    const adminPage = await admin.newPage();
    await signInPage(adminPage);
    const article = await createArticle(adminPage.request, { title: `Return target ${uniqueToken('r')}` });
    await admin.close();

    await gotoAdmin(page, `/admin/editor/${article.id}`);
    await expect(page).toHaveURL(/\/login\?next=/);
    await page.getByLabel('Username').fill(E2E_ADMIN.username);
    await page.getByLabel('Password', { exact: true }).fill(E2E_ADMIN.password);
    await page.getByRole('button', { name: 'Log In' }).click();
    await expect(page).toHaveURL(new RegExp(`/admin/editor/${article.id}$`));
    await expect(page.getByRole('heading', { name: 'Edit Article' })).toBeVisible();
  });

  test('/editor/{id} redirects to /admin/editor/{id}', async ({ request }) => {
    const response = await request.get('/editor/abc-123', { maxRedirects: 0 });
    expect(response.status()).toBe(301);
    expect(response.headers().location).toBe('/admin/editor/abc-123');
  });

  // Last in the file: it provokes the login throttle (the helpers wait it out for later specs).
  test('too many failures show the wait the server asks for', async ({ page }) => {
    await gotoAdmin(page, '/login');
    const username = `nobody-${uniqueToken('u')}`;
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password', { exact: true }).fill('wrong-password');
    const message = page.locator('#login-problem');
    // 3 free failures, then the throttle locks for growing delays: a few tries reach 429.
    let throttled = false;
    for (let attempt = 0; attempt < 10 && !throttled; attempt++) {
      const [response] = await Promise.all([
        page.waitForResponse((r) => new URL(r.url()).pathname === '/api/auth/login'),
        page.getByRole('button', { name: 'Log In' }).click(),
      ]);
      throttled = response.status() === 429;
      await expect(page.getByRole('button', { name: 'Log In' })).toBeEnabled();
    }
    expect(throttled).toBe(true);
    await expect(message).toHaveText(/^Too many sign-in attempts\. Please wait \d+ seconds? before trying again\.$/);
    await expectToast(page, 'Too many attempts', /Please wait \d+ seconds?/);
  });
});
