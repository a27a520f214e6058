/** The dashboard's Subscribers tab: counts, last briefing, search, remove, CSV export, briefing preview and test copy. */
import fs from 'node:fs';
import type { Page } from '@playwright/test';
import { expectNoSeriousViolations } from './axe.ts';
import { expect, test } from './fixtures.ts';
import type { SubscriberListing } from '../../src/schemas/newsletter.ts';
import { answerNextConfirm, createArticle, expectToast, gotoAdmin, signInPage, uniqueToken } from './admin-helpers.ts';

test.beforeEach(async ({ page }) => {
  await signInPage(page);
});

async function listing(page: Page): Promise<SubscriberListing> {
  const response = await page.request.get('/api/newsletter/subscribers');
  expect(response.status()).toBe(200);
  return (await response.json()) as SubscriberListing;
}

async function openSubscribers(page: Page): Promise<void> {
  await gotoAdmin(page, '/admin');
  await page.getByRole('tab', { name: 'Subscribers' }).click();
  await expect(page.getByRole('tab', { name: 'Subscribers' })).toHaveAttribute('aria-selected', 'true');
  await expect(page).toHaveURL(/[?&]tab=subscribers/);
}

test('counts, search, remove and CSV export', { tag: '@store' }, async ({ page }) => {
  const token = uniqueToken('sub');
  const keep = `${token}-keep@example.com`;
  const drop = `${token}-drop@example.com`;
  for (const email of [keep, drop]) expect((await page.request.post('/api/newsletter/subscribe', { data: { email } })).status()).toBe(200);
  const counts = (await listing(page)).counts;

  await openSubscribers(page);
  await expect(page.getByTestId('count-confirmed')).toContainText(`Confirmed${counts.confirmed}`);
  await expect(page.getByTestId('count-pending')).toContainText(`Pending${counts.pending}`);
  await expect(page.getByTestId('count-unsubscribed')).toContainText(`Unsubscribed${counts.unsubscribed}`);
  await expect(page.getByTestId('last-briefing')).toHaveText(/No briefing has been sent yet|Last briefing|had nothing to send/);

  await page.getByLabel('Search subscribers').fill(token);
  await page.getByRole('button', { name: 'Search' }).click();
  await expect(page.getByTestId('admin-subscriber')).toHaveCount(2);
  await expect(page.getByTestId('subscriber-total')).toHaveText('2 subscribers');
  await expect(page.getByTestId('admin-subscriber').filter({ hasText: keep })).toContainText('pending');

  const download = page.waitForEvent('download');
  await page.getByRole('link', { name: 'Export CSV' }).click();
  const file = await (await download).path();
  const csv = fs.readFileSync(file, 'utf8');
  expect(csv.split('\r\n')[0]).toBe('"email","status","signed_up","confirmed","unsubscribed"');
  expect(csv).toContain(`"${keep}","pending"`);

  const row = page.getByTestId('admin-subscriber').filter({ hasText: drop });
  const asked = answerNextConfirm(page, true);
  await row.getByRole('button', { name: 'Remove' }).click();
  expect(await asked).toContain(drop);
  await expectToast(page, 'Subscriber removed');
  await expect(page.getByTestId('admin-subscriber')).toHaveCount(1);
  await expect(page.getByTestId('count-pending')).toContainText(`Pending${counts.pending - 1}`);
  expect((await listing(page)).items.some((s) => s.email === drop)).toBe(false);
});

test('previews the briefing and sends a test copy', async ({ page }) => {
  const title = `Briefing lead ${uniqueToken('b')}`;
  await createArticle(page.request, { title, status: 'published', isEditorsPick: true });
  await openSubscribers(page);
  await page.getByRole('button', { name: 'Preview briefing' }).click();
  const preview = page.getByTestId('briefing-preview');
  await expect(preview).toContainText('Subject:');
  await expect(preview).toContainText(title);
  await expect(page.getByRole('link', { name: 'Open as e-mail' })).toHaveAttribute('href', '/api/newsletter/briefing/preview?format=html');

  await page.getByLabel('Send a test copy to').fill('nope');
  await page.getByRole('button', { name: 'Send test copy' }).click();
  await expectToast(page, 'Error', 'Please enter a valid email address.');
  await page.getByLabel('Send a test copy to').fill('editor@example.com');
  await page.getByRole('button', { name: 'Send test copy' }).click();
  await expectToast(page, 'Test copy sent', 'Test copy sent to editor@example.com');
});

test('the tab (with the preview open) and the confirm page have no serious axe violations', async ({ page }) => {
  await openSubscribers(page);
  await expect(page.getByTestId('count-confirmed')).not.toContainText('…');
  await page.getByRole('button', { name: 'Preview briefing' }).click();
  await expect(page.getByTestId('briefing-preview')).toBeVisible();
  await expectNoSeriousViolations(page);
  await page.goto('/newsletter/confirm?token=' + 'c'.repeat(32));
  await expect(page.getByTestId('confirm-result')).toHaveAttribute('data-outcome', 'unknown');
  await expectNoSeriousViolations(page);
});
