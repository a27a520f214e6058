/**
 * Roles in the browser (issue 14): an admin adds a user in the Users tab; a contributor cannot publish (no button, and the API says 403).
 */
import type { Browser } from '@playwright/test';
import { expectNoSeriousViolations } from './axe.ts';
import { expect, test } from './fixtures.ts';
import { declineCookies, gotoAdmin, signInPage, uniqueToken, waitForIsland } from './admin-helpers.ts';

/** A browser context signed in as `username`, with the cookie choice made up front. */
async function signedInPage(browser: Browser, username: string, password: string) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await declineCookies(page);
  const login = await page.request.post('/api/auth/login', { data: { username, password } });
  expect(login.status(), await login.text()).toBe(200);
  return { context, page };
}

test(
  'an admin adds a user with a role in the Users tab; the password is shown once and works',
  { tag: '@store' },
  async ({ page, browser }) => {
    await signInPage(page);
    await gotoAdmin(page, '/admin?tab=users');
    await expect(page.getByRole('tab', { name: 'Users' })).toHaveAttribute('aria-selected', 'true');
    await expect(page.getByRole('tab', { name: 'Audit' })).toBeVisible();

    const username = uniqueToken('reporter-');
    const form = page.getByRole('form', { name: 'Add a user' });
    await form.getByLabel('Username').fill(username);
    await form.getByLabel('Role').selectOption('author');
    await form.getByRole('button', { name: 'Add User' }).click();

    const shown = page.getByTestId('generated-password');
    await expect(shown).toContainText(username);
    const password = (await shown.locator('code').textContent())!.trim();
    expect(password).toMatch(/^[a-z2-7]{5}(-[a-z2-7]{5}){3}$/);
    const row = page.locator(`[data-testid="admin-user"][data-username="${username}"]`);
    await expect(row.getByLabel(`Role of ${username}`)).toHaveValue('author');
    await shown.getByRole('button', { name: 'Done' }).click();
    await expect(shown).toHaveCount(0);

    // The new author signs in with the password shown, and the dashboard shows them only what an author may use.
    const author = await signedInPage(browser, username, password);
    await gotoAdmin(author.page, '/admin');
    await expect(author.page.getByTestId('signed-in-as')).toContainText(`${username} (author)`);
    await expect(author.page.getByRole('tab', { name: 'Article Manager' })).toBeVisible();
    for (const hidden of ['Users', 'Audit', 'News Sources', 'Subscribers', 'Members', 'Comments'])
      await expect(author.page.getByRole('tab', { name: hidden })).toHaveCount(0);
    await author.context.close();

    // A role change in the tab is written to the audit log, which the admin reads in the Audit tab.
    await row.getByLabel(`Role of ${username}`).selectOption('editor');
    await expect(page.getByTestId('toast')).toContainText('User updated');
    await page.getByRole('tab', { name: 'Audit' }).click();
    await expect(page.getByTestId('audit-entry').first()).toContainText(`user: role ${username}`);
    await expect(page.getByTestId('audit-entry').first()).toContainText('author -> editor');
  },
);

test(
  'a contributor has no Publish or Schedule button, and the API refuses to publish with 403',
  { tag: '@store' },
  async ({ page, browser }) => {
    await signInPage(page);
    const username = uniqueToken('contrib-');
    const added = await page.request.post('/api/users', { data: { username, role: 'contributor', password: 'contributor-password' } });
    expect(added.status()).toBe(201);

    const { context, page: contributor } = await signedInPage(browser, username, 'contributor-password');
    await gotoAdmin(contributor, '/admin/editor');
    await expect(contributor.getByRole('button', { name: 'Save Draft' })).toBeVisible();
    await expect(contributor.getByRole('button', { name: 'Publish Now' })).toHaveCount(0);
    await expect(contributor.getByRole('button', { name: 'Schedule for Later' })).toHaveCount(0);

    // Their draft saves, and its page still offers no way to publish.
    await contributor.getByLabel('Title').fill(`Draft by ${username}`);
    await contributor.getByRole('button', { name: 'Save Draft' }).click();
    await expect(contributor).toHaveURL(/\/admin\/editor\/[0-9a-f-]{36}$/);
    const id = contributor.url().split('/').pop()!;
    await contributor.reload();
    await waitForIsland(contributor);
    await expect(contributor.getByRole('button', { name: 'Save Draft' })).toBeVisible();
    await expect(contributor.getByRole('button', { name: /Publish Now|Update/ })).toHaveCount(0);

    // The server is the guard, not the hidden button.
    const publish = await contributor.request.put(`/api/articles/${id}`, { data: { status: 'published' } });
    expect(publish.status()).toBe(403);
    expect(await publish.json()).toEqual({ error: 'Your role (contributor) cannot publish or unpublish this article' });
    const create = await contributor.request.post('/api/articles', { data: { title: 'Straight to print', status: 'published' } });
    expect(create.status()).toBe(403);

    // An admin page they may not use answers 403 with the reason: the editor of someone else's published article.
    const theirs = await page.request.post('/api/articles', { data: { title: `Published ${username}`, status: 'published' } });
    const editorPage = await contributor.request.get(`/admin/editor/${(await theirs.json()).id}`);
    expect(editorPage.status()).toBe(403);
    expect((await editorPage.json()).error).toBe('Your role (contributor) cannot edit this article');

    // The admin-only parts of the back office answer 403 too.
    const users = await contributor.request.get('/api/users');
    expect(users.status()).toBe(403);
    expect((await users.json()).error).toBe('Your role (contributor) cannot manage users');
    await context.close();
  },
);

test('the Users and Audit tabs have no serious axe violations', async ({ page }) => {
  await signInPage(page);
  await gotoAdmin(page, '/admin?tab=users');
  await expect(page.getByTestId('admin-user').first()).toBeVisible();
  await expectNoSeriousViolations(page);
  await page.getByRole('tab', { name: 'Audit' }).click();
  await expect(page.getByTestId('audit-entry').first()).toBeVisible();
  await expectNoSeriousViolations(page);
});
