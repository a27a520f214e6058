/**
 * Readers' accounts in the browser (issue 48): sign up from the header, follow the mailed link, edit the
 * profile, export the data, sign out, a spent link, and deleting the account after its confirmation.
 */
import fs from 'node:fs';
import { expect, test } from './fixtures.ts';
import { expectNoSeriousViolations } from './axe.ts';
import { declineCookies, expectToast, uniqueToken } from './reader-support.ts';
import { latestSignInLink, signInMember } from '../helpers/members.ts';
import { waitForIsland } from './reader-support.ts';

test.beforeEach(async ({ page }) => {
  await declineCookies(page);
});

test('a reader signs up, follows the link, edits the profile, exports the data and signs out @store', async ({ page, site }) => {
  const email = `${uniqueToken('reader')}@example.com`;
  await page.goto('/section/world');
  await waitForIsland(page, '[data-testid="member-nav"]');
  const nav = page.locator('header.site-header').getByTestId('member-nav');
  await expect(nav).toHaveText('Sign in');
  await nav.click();
  await expect(page).toHaveURL(/\/account\/sign-in$/);
  await expectNoSeriousViolations(page);

  await waitForIsland(page, 'form.member-form');
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel(/^Name/).fill('Rita Reader');
  await page.getByLabel('Send me the morning briefing').check();
  await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
  await expect(page.getByTestId('sign-in-sent')).toHaveText(`Check your inbox: we sent a link to ${email}. It works once, for one hour.`);
  await expectToast(page, 'Check your inbox');

  const link = await latestSignInLink(site.dataDir, email);
  await page.goto(link);
  await expect(page).toHaveURL(/\/account$/);
  await expect(page.getByTestId('account-email')).toHaveText(email);
  await expect(page.getByLabel(/^Name/)).toHaveValue('Rita Reader');
  await expect(page.getByLabel('Send me the morning briefing')).toBeChecked();
  await expect(page.locator('#billing')).toHaveCount(1);
  await waitForIsland(page, '[data-testid="member-nav"]');
  await expect(page.locator('header.site-header').getByTestId('member-nav')).toHaveText('Account');
  await expectNoSeriousViolations(page);

  await waitForIsland(page, '[data-testid="account-profile"]');
  await page.getByLabel(/^Name/).fill('Rita R. Reader');
  await page.getByLabel('Send me the morning briefing').uncheck();
  await page.getByRole('button', { name: 'Save changes' }).click();
  await expectToast(page, 'Profile saved');
  await page.reload();
  await expect(page.getByLabel(/^Name/)).toHaveValue('Rita R. Reader');
  await expect(page.getByLabel('Send me the morning briefing')).not.toBeChecked();

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('account-export').click()]);
  expect(download.suggestedFilename()).toMatch(/^my-account-\d{4}-\d{2}-\d{2}\.json$/);
  const exported = JSON.parse(fs.readFileSync(await download.path(), 'utf8')) as { account: { email: string; name: string } };
  expect(exported.account).toMatchObject({ email, name: 'Rita R. Reader' });

  await waitForIsland(page, '[data-testid="account-profile"]');
  await page.getByRole('button', { name: 'Sign out' }).click();
  // Off to the front page (which sends a reader on to a section).
  await expect(page).not.toHaveURL(/\/account/);
  await expectToast(page, 'Signed out');
  await waitForIsland(page, '[data-testid="member-nav"]');
  await expect(page.locator('header.site-header').getByTestId('member-nav')).toHaveText('Sign in');
  await page.goto('/account');
  await expect(page).toHaveURL(/\/account\/sign-in\?next=%2Faccount$|\/account\/sign-in\?next=\/account$/);

  // The link was used: following it again says so.
  await page.goto(link);
  await expect(page).toHaveURL(/\/account\/sign-in\?error=expired$/);
  await expect(page.getByTestId('sign-in-expired')).toContainText('expired or was already used');
});

test('a member deletes their account after confirming', async ({ page, site, context }) => {
  const email = `${uniqueToken('leaving')}@example.com`;
  const { cookie } = await signInMember(site.url, site.dataDir, email, 'Lee Leaving');
  const [name, value] = cookie.split('=') as [string, string];
  await context.addCookies([{ name, value, url: site.url, httpOnly: true, sameSite: 'Lax' }]);
  await page.goto('/account');
  await waitForIsland(page, '[data-testid="account-delete"]');
  await page.getByTestId('account-delete').click();
  await expect(page.getByText('This cannot be undone.')).toBeVisible();
  await page.getByRole('button', { name: 'Cancel' }).click();
  await page.getByTestId('account-delete').click();
  await page.getByTestId('account-delete-confirm').click();
  await expect(page).not.toHaveURL(/\/account/);
  await expectToast(page, 'Account deleted');
  expect((await page.request.get('/api/members/me')).status()).toBe(401);
});
