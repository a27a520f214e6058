/**
 * The billing mails read right (issue 48), with the copy check the newsletter mails get (copy.spec):
 * the receipt and the payment-failed notice, their HTML on a desktop and a phone and their text part,
 * for a name and without one, in a two-decimal and a zero-decimal currency. No site: only the mails.
 */
import { expect, test, type Page } from '@playwright/test';
import { findCopyProblems, formatCopyFindings } from './copy-check.ts';
import { parseConfig } from '../../src/config.ts';
import { renderPaymentFailedMail, renderReceiptMail, type BillingMailContent } from '../../src/server/members/billing-mails.ts';

const DESKTOP = { width: 1280, height: 720 };
const PHONE = { width: 375, height: 812 };
const config = parseConfig({ SITE_URL: 'http://localhost:4321' });

async function expectReadsRight(page: Page, where: string): Promise<void> {
  const findings = await page.evaluate(findCopyProblems, null);
  expect.soft(findings, `${where} does not read right:\n${formatCopyFindings(findings)}`).toEqual([]);
}

/** As copy.spec reads a mail: the HTML part on a desktop and a phone, then the subject and text part as a plain-text client shows them. */
async function expectMailReadsRight(page: Page, mail: { subject: string; html: string; text: string }, where: string): Promise<void> {
  await page.setContent(mail.html);
  for (const [device, size] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    await page.setViewportSize(size);
    await expectReadsRight(page, `${where}, HTML (${device})`);
  }
  await page.setViewportSize(DESKTOP);
  await page.setContent('<main style="white-space: pre-wrap"></main>');
  await page.locator('main').evaluate((main, text) => (main.textContent = text), `${mail.subject}\n\n${mail.text}`);
  await expectReadsRight(page, `${where}, subject and text part`);
}

const CASES: [string, BillingMailContent][] = [
  [
    'a monthly plan in dollars',
    { name: 'Nora Reader', amount: 500, currency: 'usd', interval: 'month', periodEnd: '2027-01-03T10:00:00.000Z' },
  ],
  ['a yearly plan in yen, no name', { name: '', amount: 5000, currency: 'jpy', interval: 'year', periodEnd: '2027-12-31T23:00:00.000Z' }],
];

for (const [label, content] of CASES) {
  test(`the receipt and the payment-failed mail read right: ${label}`, async ({ page }) => {
    const receipt = renderReceiptMail(config, content);
    const failed = renderPaymentFailedMail(config, content);
    await expectMailReadsRight(page, receipt, 'the receipt');
    await expectMailReadsRight(page, failed, 'the payment-failed mail');
    // The failed notice leads to where the card is changed.
    await page.setContent(failed.html);
    await expect(page.getByRole('link', { name: 'Manage billing' })).toHaveAttribute('href', 'http://localhost:4321/account');
    expect(receipt.text).toContain(content.currency === 'jpy' ? '¥5,000' : '$5.00');
  });
}
