/**
 * The paywall of a gated story (issue 48) in the browser: the box a signed-out reader sees (and axe on
 * it), the whole story in place for a member, the subscribe box for a free member on a paid story.
 * What the server sends and never sends is proven in tests/api/members-access.test.ts.
 */
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import type { Article } from '../../src/schemas/article.ts';
import { expectNoSeriousViolations } from './axe.ts';
import { findCopyProblems } from './copy-check.ts';
import { createArticle, declineCookies, signIn, uniqueToken, waitForIsland } from './reader-support.ts';
import { latestSignInLink } from '../helpers/members.ts';
import { expectToast, getArticle, gotoAdmin, signInPage } from './admin-helpers.ts';

let membersStory: Article;
let paidStory: Article;
const secret = uniqueToken('The ledger names buyer ');

const story = (teaser: string) =>
  [
    `<p>${teaser} opens the story in its first paragraph.</p>`,
    '<p>The second paragraph is part of the teaser too.</p>',
    '<p>The third paragraph is where the gate begins, for readers who are not members.</p>',
    `<p>${secret}.</p>`,
    ...Array.from({ length: 4 }, (_, i) => `<p>Paragraph ${i + 5} goes on at the length of a real story, with more detail.</p>`),
  ].join('\n');

test.beforeAll(async ({ playwright, site }) => {
  const request = await playwright.request.newContext({ baseURL: site.url, extraHTTPHeaders: { Origin: site.url } });
  await signIn(request);
  membersStory = await createArticle(request, {
    title: uniqueToken('Members story '),
    status: 'published',
    access: 'members',
    bodyHtml: story('Members teaser'),
  });
  paidStory = await createArticle(request, {
    title: uniqueToken('Paid story '),
    status: 'published',
    access: 'paid',
    bodyHtml: story('Paid teaser'),
  });
  await expect.poll(async () => (await request.get(`/article/${paidStory.slug}`)).status(), { timeout: 30_000 }).toBe(200);
  await expect.poll(async () => (await request.get(`/article/${membersStory.slug}`)).status(), { timeout: 30_000 }).toBe(200);
  await request.dispose();
});

/** Signs the browser in as a new member through the mailed link, as a reader would. */
async function signInAsMember(page: Page, dataDir: string): Promise<void> {
  const email = `${uniqueToken('reader')}@example.com`;
  const asked = await page.request.post('/api/members/sign-in', { data: { email, name: 'Paula Reader' } });
  expect(asked.status(), await asked.text()).toBe(200);
  await page.goto(await latestSignInLink(dataDir, email));
  expect((await page.context().cookies()).map((c) => c.name)).toContain('member_session');
}

test('signed out: the teaser and the sign-up box instead of the rest, with no serious accessibility violation', async ({ page }) => {
  await declineCookies(page);
  await page.goto(`/article/${membersStory.slug}`);
  await waitForIsland(page, '[data-testid="paywall"]');
  const box = page.getByTestId('paywall');
  await expect(box.getByRole('heading', { name: 'This story is for members' })).toBeVisible();
  const next = encodeURIComponent(`/article/${membersStory.slug}`);
  await expect(box.getByRole('link', { name: 'Sign in' })).toHaveAttribute('href', `/account/sign-in?next=${next}`);
  await expect(box.getByRole('link', { name: 'Sign up free' })).toHaveAttribute('href', `/account/sign-in?next=${next}`);
  await expect(page.locator('.article-body')).toContainText('Members teaser opens the story');
  await expect(page.locator('.article-body')).not.toContainText(secret);
  await expectNoSeriousViolations(page);
  expect(await box.evaluate(findCopyProblems)).toEqual([]);
});

test('a member reads the whole members-only story in place; a free member is asked to subscribe for a paid one', async ({ page, site }) => {
  await declineCookies(page);
  await signInAsMember(page, site.dataDir);
  await page.goto(`/article/${membersStory.slug}`);
  const gated = page.locator('.article-body .article-gated');
  await expect(gated).toContainText(secret);
  // In place: the teaser's paragraphs are the story's own, shown once, and the box is gone.
  await expect(page.locator('.article-body').getByText('Members teaser opens the story')).toHaveCount(1);
  await expect(page.getByTestId('paywall')).toHaveCount(0);
  await expectNoSeriousViolations(page, { include: '.article-body' });

  await page.goto(`/article/${paidStory.slug}`);
  const box = page.getByTestId('paywall');
  await expect(box.getByRole('link', { name: 'Subscribe' })).toHaveAttribute(
    'href',
    `/account?next=${encodeURIComponent(`/article/${paidStory.slug}`)}#billing`,
  );
  await expect(box.getByRole('heading', { name: 'This story is for paying subscribers' })).toBeVisible();
  await expect(page.locator('.article-body')).not.toContainText(secret);
  expect(await box.evaluate(findCopyProblems)).toEqual([]);
});

test('the editor gates a published story with its Access select, and the page follows', async ({ page }) => {
  await signInPage(page);
  const article = await createArticle(page.request, {
    title: uniqueToken('Opened story '),
    status: 'published',
    bodyHtml: story('Editor teaser'),
  });
  await gotoAdmin(page, `/admin/editor/${article.id}`);
  const access = page.getByLabel('Access');
  await expect(access).toHaveValue('public');
  await expect(access.locator('option')).toHaveText(['Public', 'Members only', 'Paid subscribers only']);
  await access.selectOption({ label: 'Members only' });
  const [request] = await Promise.all([
    page.waitForRequest((r) => r.method() === 'PUT' && new URL(r.url()).pathname === `/api/articles/${article.id}`),
    page.getByRole('button', { name: 'Update', exact: true }).click(),
  ]);
  expect(request.postDataJSON()).toMatchObject({ access: 'members' });
  await expectToast(page, 'Article updated', 'Your article has been updated successfully.');
  expect((await getArticle(page.request, article.id)).access).toBe('members');
  // Staff read every story through the content API: the page as a signed-out reader sees it is read without the session.
  await expect
    .poll(async () => (await (await fetch(new URL(`/article/${article.slug}`, page.url()))).text()).includes('data-testid="paywall"'), {
      timeout: 30_000,
    })
    .toBe(true);
});
