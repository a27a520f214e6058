/** The dashboard's Members tab (issue 48) on the demo's members: counts, search, status filter, a member's page, comps, axe. */
import type { Page } from '@playwright/test';
import { expectNoSeriousViolations } from './axe.ts';
import { expect, test } from './fixtures.ts';
import type { MemberListing } from '../../src/schemas/member-admin.ts';
import { expectToast, gotoAdmin, signInPage } from './admin-helpers.ts';

async function listing(page: Page, query: string): Promise<MemberListing> {
  const response = await page.request.get(`/api/members${query}`);
  expect(response.status()).toBe(200);
  return (await response.json()) as MemberListing;
}

async function search(page: Page, text: string): Promise<void> {
  await page.getByLabel('Search members').fill(text);
  await page.getByRole('button', { name: 'Search' }).click();
}

test('lists, searches, filters and comps a member, then removes the comp', { tag: '@store' }, async ({ page }) => {
  await signInPage(page);
  const all = await listing(page, '');
  const free = (await listing(page, '?status=free&pageSize=100')).items.find((m) => !m.comp)!;
  expect(free, 'a free demo member').toBeDefined();

  await gotoAdmin(page, '/admin?tab=members');
  await expect(page.getByRole('tab', { name: 'Members' })).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByTestId('member-count-paid')).toContainText(`Paid${all.counts.paid}`);
  await expect(page.getByTestId('member-count-free')).toContainText(`Free${all.counts.free}`);
  await expect(page.getByTestId('member-total')).toHaveText(`${all.total} members`);

  // The status filter applies at once: every row is a paying member.
  await page.getByLabel('Status').selectOption('paid');
  await expect(page.getByTestId('member-total')).toHaveText(`${all.counts.paid} ${all.counts.paid === 1 ? 'member' : 'members'}`);
  await expect(page.getByTestId('admin-member').locator('.adm-badge').first()).toHaveText('paid');
  await search(page, free.email);
  await expect(page.getByText('No members match this search.')).toBeVisible();
  await page.getByLabel('Status').selectOption('');
  await expect(page.getByTestId('admin-member')).toHaveCount(1);
  await expect(page.getByTestId('member-total')).toHaveText('1 member');

  const row = page.getByTestId('admin-member').filter({ hasText: free.email });
  await row.getByRole('button', { name: free.email }).click();
  const detail = row.getByTestId('member-detail');
  await expect(detail.getByTestId('member-history-line').last()).toHaveText(/Signed up\./);

  // A date in the past is refused in the browser, nothing sent.
  const until = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
  await detail.getByLabel('Comp until (optional)').fill('2020-01-01');
  await detail.getByRole('button', { name: 'Comp a subscription' }).click();
  await expectToast(page, 'Error', 'Choose an end date after today, or none.');
  await detail.getByLabel('Comp until (optional)').fill(until);
  await detail.getByRole('button', { name: 'Comp a subscription' }).click();
  await expectToast(page, 'Subscription comped');
  await expect(row.locator('.adm-badge').first()).toHaveText('comped');
  await expect(detail.getByTestId('member-history-line').first()).toContainText('comped a paid subscription until');
  await expect(page.getByTestId('member-count-comped')).toContainText(`Comped${all.counts.comped + 1}`);
  await expectNoSeriousViolations(page);

  await detail.getByRole('button', { name: 'Remove comp' }).click();
  await expectToast(page, 'Comp removed');
  await expect(row.locator('.adm-badge').first()).toHaveText('free');
  await expect(detail.getByTestId('member-history-line').first()).toContainText('removed the comped subscription');
  await expect(detail.getByRole('button', { name: 'Remove comp' })).toHaveCount(0);

  // The plans form checks its fields before it sends anything.
  await page.getByRole('form', { name: 'Plans' }).getByLabel('Currency').fill('us');
  await page.getByRole('button', { name: 'Save plans' }).click();
  await expectToast(page, 'Error', 'A currency is a three-letter code, such as usd or eur.');
});
