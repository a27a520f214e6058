/**
 * Members from end to end (issue 48's "done when"), in the browser against the site and its Stripe stand-in:
 * a reader signs up by the mailed link, reads a members-only story, subscribes through Checkout, reads a paid
 * story, cancels in the Portal and loses the paid story when the period ends (the stand-in's clock moved);
 * signed out, both pages hold only their teasers. Every served file is checked in tests/api/members-access.test.ts.
 */
import { expect, test } from './fixtures.ts';
import type { Article } from '../../src/schemas/article.ts';
import { createArticle, declineCookies, signIn, uniqueToken } from './reader-support.ts';
import { latestSignInLink } from '../helpers/members.ts';

const DAY_MS = 86_400_000;
const membersOnly = uniqueToken('Only members read that the harbour board ');
const paidOnly = uniqueToken('Only subscribers read that the council ');

const story = (lead: string, gated: string) =>
  [
    `<p>${lead} opens the story in its first paragraph.</p>`,
    '<p>The second paragraph is part of the teaser too.</p>',
    '<p>The third paragraph is where the gate begins.</p>',
    `<p>${gated}.</p>`,
    ...Array.from({ length: 4 }, (_, i) => `<p>Paragraph ${i + 5} goes on at the length of a real story.</p>`),
  ].join('\n');

let membersStory: Article;
let paidStory: Article;

test.beforeAll(async ({ playwright, site }) => {
  const admin = await playwright.request.newContext({ baseURL: site.url, extraHTTPHeaders: { Origin: site.url } });
  await signIn(admin);
  const plans = await admin.put('/api/members/plans', { data: { currency: 'usd', monthly: 500, yearly: 5000 } });
  expect(plans.status(), await plans.text()).toBe(200);
  membersStory = await createArticle(admin, {
    title: uniqueToken('Harbour story '),
    status: 'published',
    access: 'members',
    bodyHtml: story('Harbour teaser', membersOnly),
  });
  paidStory = await createArticle(admin, {
    title: uniqueToken('Council story '),
    status: 'published',
    access: 'paid',
    bodyHtml: story('Council teaser', paidOnly),
  });
  for (const article of [membersStory, paidStory])
    await expect.poll(async () => (await admin.get(`/article/${article.slug}`)).status(), { timeout: 30_000 }).toBe(200);
  await admin.dispose();
});

test('a reader signs up, reads a members story, subscribes, reads a paid story, cancels and loses it at the period end @store', async ({
  page,
  site,
  stripe,
}) => {
  test.setTimeout(90_000);
  await declineCookies(page);
  const body = page.locator('.article-body');

  // Signs up from the paywall's link, by the link in the mail.
  await page.goto(`/article/${membersStory.slug}`);
  await page.getByTestId('paywall').getByRole('link', { name: 'Sign up free' }).click();
  const email = `${uniqueToken('reader')}@example.com`;
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
  await expect(page.getByTestId('sign-in-sent')).toContainText(email);
  await page.goto(await latestSignInLink(site.dataDir, email));
  await expect(page).toHaveURL(new RegExp(`/article/${membersStory.slug}$`));
  await expect(body.locator('.article-gated')).toContainText(membersOnly);

  // A free member is asked to subscribe for the paid story, and pays through Checkout.
  await page.goto(`/article/${paidStory.slug}`);
  await expect(body).not.toContainText(paidOnly);
  await page.getByTestId('paywall').getByRole('link', { name: 'Subscribe' }).click();
  await page.getByRole('button', { name: 'Subscribe monthly: $5.00 a month' }).click();
  await expect(page).toHaveURL(new RegExp(`^${stripe.url}/checkout/`));
  await page.getByRole('button', { name: 'Pay' }).click();
  await expect(page.getByTestId('billing-status')).toContainText('Active', { timeout: 15_000 });
  await page.goto(`/article/${paidStory.slug}`);
  await expect(body.locator('.article-gated')).toContainText(paidOnly);

  // Cancels in the Portal: still paid until the period ends, then not.
  await page.goto('/account');
  await page.getByRole('button', { name: 'Manage billing' }).click();
  await expect(page).toHaveURL(new RegExp(`^${stripe.url}/portal/`));
  await page.getByRole('button', { name: 'Cancel subscription' }).click();
  await expect(page.getByTestId('billing-status')).toContainText(/ends on/i);
  await page.goto(`/article/${paidStory.slug}`);
  await expect(body.locator('.article-gated')).toContainText(paidOnly);
  await stripe.advance(32 * DAY_MS);
  await page.goto(`/article/${paidStory.slug}`);
  await expect(page.getByTestId('paywall').getByRole('heading', { name: 'This story is for paying subscribers' })).toBeVisible();
  await expect(body).not.toContainText(paidOnly);
  await page.goto(`/article/${membersStory.slug}`);
  await expect(body.locator('.article-gated')).toContainText(membersOnly);

  // Signed out: both pages show only their teasers, and their HTML holds nothing more.
  await page.goto('/account');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).not.toHaveURL(/\/account$/);
  for (const [article, hidden] of [
    [membersStory, membersOnly],
    [paidStory, paidOnly],
  ] as const) {
    await page.goto(`/article/${article.slug}`);
    await expect(page.getByTestId('paywall')).toBeVisible();
    await expect(body).not.toContainText(hidden);
    const served = await page.request.get(`/article/${article.slug}`);
    expect(await served.text()).not.toContain(hidden);
  }
});
