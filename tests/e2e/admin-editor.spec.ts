/** The article editor: create, save draft, publish, update, schedule, validation, failures and the hero image upload. */
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import type { Page, Request } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import { createArticle, expectToast, getArticle, gotoAdmin, signInPage, uniqueToken, waitForIsland } from './admin-helpers.ts';

test.beforeEach(async ({ page }) => {
  await signInPage(page);
});

const longDate = (d: Date) => new Intl.DateTimeFormat('en-US', { dateStyle: 'long' }).format(d);
const inputDate = (d: Date) => `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;

function isArticleWrite(req: Request): boolean {
  const { pathname } = new URL(req.url());
  return (req.method() === 'POST' && pathname === '/api/articles') || (req.method() === 'PUT' && pathname.startsWith('/api/articles/'));
}

async function click(page: Page, name: string) {
  await page.getByRole('button', { name, exact: true }).click();
}

/**
 * Clicks a save button and answers the JSON body the editor sent, once the server has answered it:
 * two saves in a row show the same toast, so the toast alone does not say this save is stored yet.
 */
async function saveWith(page: Page, name: string): Promise<Record<string, unknown>> {
  const [request] = await Promise.all([page.waitForRequest(isArticleWrite), click(page, name)]);
  await request.response();
  return request.postDataJSON() as Record<string, unknown>;
}

test('create, save draft, publish, update, schedule and back to draft', { tag: ['@store', '@smoke'] }, async ({ page }) => {
  const token = uniqueToken('ed');
  let writes = 0;
  page.on('request', (req) => {
    if (isArticleWrite(req)) writes++;
  });
  await gotoAdmin(page, '/admin/editor');
  await expect(page.getByRole('heading', { name: 'Create New Article' })).toBeVisible();
  const status = page.getByTestId('editor-status');
  await expect(status).toHaveText('Draft article');
  await expect(page.getByRole('button', { name: 'Schedule for Later' })).toBeDisabled();
  await expect(page.getByRole('button', { name: /Pick a date/ })).toBeVisible();
  await expect(page.getByRole('combobox', { name: 'Section', exact: true })).toHaveValue('home');
  await expect(page.getByLabel('Deck (Summary)')).toHaveAttribute('rows', '2');
  await expect(page.getByLabel('Article Body (HTML)')).toHaveAttribute('rows', '12');
  await expect(page.getByText('Use HTML tags such as <p>, <h2>, <ul>, <blockquote>.')).toBeVisible();

  await click(page, 'Publish Now');
  await expectToast(page, 'Title required', 'Please enter a title for the article.');
  expect(writes).toBe(0);

  await page.getByLabel('Title').fill(`${token} headline`);
  await page.getByLabel('Author Name').fill('Jane Reporter');
  await page.getByLabel('Article Body (HTML)').fill('<p>Hello <strong>world</strong></p><h2>More</h2>');
  await expect(page.frameLocator('iframe[title="Article body preview"]').locator('strong')).toHaveText('world');
  await page.getByRole('combobox', { name: 'Section', exact: true }).selectOption('tech');

  const tagInput = page.getByLabel('Tags', { exact: true });
  const chips = page.getByTestId('tag-chip');
  await tagInput.fill('  alpha  ');
  await click(page, 'Add');
  await tagInput.fill('beta');
  await tagInput.press('Enter');
  await tagInput.fill('alpha');
  await tagInput.press('Enter');
  await tagInput.fill('   ');
  await click(page, 'Add');
  await expect(chips).toHaveText(['alpha×', 'beta×']);
  await page.getByRole('button', { name: 'Remove tag beta' }).click();
  await tagInput.fill('gamma');
  await tagInput.press('Enter');
  await expect(chips).toHaveText(['alpha×', 'gamma×']);
  await page.getByRole('switch', { name: 'Breaking News' }).check();

  const created = await saveWith(page, 'Save Draft');
  await expectToast(page, 'Article created', 'Your article has been created successfully.');
  expect(created).toEqual({
    title: `${token} headline`,
    authorName: 'Jane Reporter',
    bodyHtml: '<p>Hello <strong>world</strong></p><h2>More</h2>',
    section: 'tech',
    tags: ['alpha', 'gamma'],
    isBreaking: true,
    isEditorsPick: false,
    status: 'draft',
    access: 'public',
  });
  await expect(page).toHaveURL(/\/admin\/editor\/[A-Za-z0-9_-]+$/);
  const id = new URL(page.url()).pathname.split('/').pop()!;
  await expect(page.getByRole('heading', { name: 'Edit Article' })).toBeVisible();
  await expect(status).toHaveText('Draft article');
  const draft = await getArticle(page.request, id);
  expect(draft).toMatchObject({ status: 'draft', section: 'tech', tags: ['alpha', 'gamma'], isBreaking: true });
  expect(draft.dek).toBeUndefined();

  const published = await saveWith(page, 'Publish Now');
  await expectToast(page, 'Article updated', 'Your article has been updated successfully.');
  expect(published.status).toBe('published');
  await expect(status).toContainText('Article is live');
  await expect(page.getByRole('button', { name: 'Update', exact: true })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Publish Now' })).toHaveCount(0);
  expect((await getArticle(page.request, id)).status).toBe('published');

  await page.getByLabel('Title').fill(`${token} better headline`);
  await page.getByLabel('Deck (Summary)').fill('A short deck.');
  await saveWith(page, 'Update');
  await expectToast(page, 'Article updated', 'Your article has been updated successfully.');
  expect(await getArticle(page.request, id)).toMatchObject({
    title: `${token} better headline`,
    dek: 'A short deck.',
    status: 'published',
  });

  const when = new Date();
  when.setDate(when.getDate() + 10);
  await page.getByRole('button', { name: /Pick a date/ }).click();
  await page.getByLabel('Publish date').fill(inputDate(when));
  await page.getByLabel('Publish time').fill('14:30');
  await click(page, 'Done');
  await expect(page.getByRole('button', { name: /Schedule Publication/ })).toContainText(longDate(when));
  const scheduled = await saveWith(page, 'Schedule for Later');
  await expectToast(page, 'Article updated', 'Your article has been updated successfully.');
  const expectedInstant = new Date(when.getFullYear(), when.getMonth(), when.getDate(), 14, 30).toISOString();
  expect(scheduled).toMatchObject({ status: 'scheduled', scheduledFor: expectedInstant });
  await expect(status).toHaveText(`Scheduled for ${longDate(when)}`);
  expect(await getArticle(page.request, id)).toMatchObject({ status: 'scheduled', scheduledFor: expectedInstant });

  // A reload shows the stored article, scheduled date included.
  await page.reload();
  await waitForIsland(page);
  await expect(page.getByLabel('Title')).toHaveValue(`${token} better headline`);
  await expect(page.getByLabel('Deck (Summary)')).toHaveValue('A short deck.');
  await expect(page.getByRole('combobox', { name: 'Section', exact: true })).toHaveValue('tech');
  await expect(chips).toHaveText(['alpha×', 'gamma×']);
  await expect(page.getByRole('switch', { name: 'Breaking News' })).toBeChecked();
  await expect(status).toHaveText(`Scheduled for ${longDate(when)}`);

  // Back to draft: no scheduledFor is sent, and the server drops it.
  const redrafted = await saveWith(page, 'Save Draft');
  await expectToast(page, 'Article updated');
  expect(redrafted).not.toHaveProperty('scheduledFor');
  expect(redrafted.status).toBe('draft');
  await expect(status).toHaveText('Draft article');
  const final = await getArticle(page.request, id);
  expect(final.status).toBe('draft');
  expect(final.scheduledFor).toBeUndefined();
});

test('scheduling needs a title and a date', async ({ page }) => {
  let writes = 0;
  page.on('request', (req) => {
    if (isArticleWrite(req)) writes++;
  });
  await gotoAdmin(page, '/admin/editor');
  const schedule = page.getByRole('button', { name: 'Schedule for Later' });
  await expect(schedule).toBeDisabled();
  await page.getByRole('button', { name: /Pick a date/ }).click();
  const when = new Date();
  when.setDate(when.getDate() + 3);
  await page.getByLabel('Publish date').fill(inputDate(when));
  await expect(schedule).toBeEnabled();
  await schedule.click();
  await expectToast(page, 'Title required', 'Please enter a title for the article.');

  await page.getByLabel('Title').fill(`Scheduled ${uniqueToken('v')}`);
  await page.getByLabel('Publish time').fill('');
  await schedule.click();
  await expectToast(page, 'Date required', 'Please select a publish date.');
  expect(writes).toBe(0);

  await click(page, 'Clear date');
  await expect(schedule).toBeDisabled();
  await expect(page.getByRole('button', { name: /Pick a date/ })).toBeVisible();
});

test('failed saves show the create and update errors', async ({ page }) => {
  await gotoAdmin(page, '/admin/editor');
  // Save Draft has no client check: the server refuses an empty title.
  await click(page, 'Save Draft');
  await expectToast(page, 'Error', 'Failed to create article. Please try again.');
  await expect(page).toHaveURL(/\/admin\/editor$/);

  const article = await createArticle(page.request, { title: `Doomed ${uniqueToken('d')}` });
  await gotoAdmin(page, `/admin/editor/${article.id}`);
  await expect(page.getByLabel('Title')).toHaveValue(article.title);
  expect((await page.request.delete(`/api/articles/${article.id}`)).status()).toBe(204);
  await click(page, 'Save Draft');
  await expectToast(page, 'Error', 'Failed to update article. Please try again.');
});

test('a spinner shows while the article loads; an unknown id says so', async ({ page }) => {
  const article = await createArticle(page.request, { title: `Slow ${uniqueToken('l')}` });
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route(`**/api/articles/${article.id}`, async (route) => {
    await held;
    await route.continue();
  });
  await gotoAdmin(page, `/admin/editor/${article.id}`);
  await expect(page.getByRole('status').filter({ hasText: 'Loading article' })).toBeAttached();
  await expect(page.locator('.adm-spinner')).toBeVisible();
  await expect(page.getByLabel('Title')).toHaveCount(0);
  release();
  await expect(page.getByLabel('Title')).toHaveValue(article.title);
  await expect(page.locator('.adm-spinner')).toHaveCount(0);
  await page.unroute(`**/api/articles/${article.id}`);

  await gotoAdmin(page, '/admin/editor/no-such-article');
  await expect(page.getByRole('heading', { name: 'Article Not Found' })).toBeVisible();
});

test('hero image: upload a real JPEG, preview, save, remove', { tag: '@store' }, async ({ page }, testInfo) => {
  const imagePath = testInfo.outputPath('hero.jpg');
  fs.mkdirSync(path.dirname(imagePath), { recursive: true });
  await sharp({ create: { width: 1600, height: 900, channels: 3, background: { r: 30, g: 90, b: 160 } } })
    .composite([
      { input: Buffer.from('<svg width="800" height="450"><circle cx="400" cy="225" r="200" fill="orange"/></svg>'), top: 225, left: 400 },
    ])
    .jpeg({ quality: 80 })
    .toFile(imagePath);

  await gotoAdmin(page, '/admin/editor');
  await page.getByLabel('Title').fill(`Pictured ${uniqueToken('img')}`);
  await expect(page.getByText('Click to upload hero image')).toBeVisible();

  // Hold normalisation so the in-progress state can be seen.
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route('**/api/images/normalize', async (route) => {
    await held;
    await route.continue();
  });
  const putDone = page.waitForRequest((req) => req.method() === 'PUT' && req.headers()['content-type'] === 'image/jpeg');
  await page.getByTestId('hero-file-input').setInputFiles(imagePath);
  await expect(page.getByText('Uploading...')).toBeVisible();
  await putDone;
  release();
  await expectToast(page, 'Image uploaded', 'Hero image uploaded successfully.');
  await page.unroute('**/api/images/normalize');

  const preview = page.getByTestId('hero-preview');
  await expect(preview).toBeVisible();
  await expect(preview).toHaveAttribute('src', /^\/images\/[a-f0-9]+\/\d+\.webp$/);
  await expect.poll(() => preview.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBeGreaterThan(0);

  const body = await saveWith(page, 'Save Draft');
  await expectToast(page, 'Article created');
  expect(body.heroImage).toMatch(/^\/images\/[a-f0-9]+\/1200\.webp$/);
  const id = new URL(page.url()).pathname.split('/').pop()!;
  expect((await getArticle(page.request, id)).heroImage).toBe(body.heroImage);

  await page.getByRole('button', { name: 'Remove image' }).click();
  await expect(preview).toHaveCount(0);
  await expect(page.getByText('Click to upload hero image')).toBeVisible();
  await saveWith(page, 'Save Draft');
  await expectToast(page, 'Article updated');
  expect((await getArticle(page.request, id)).heroImage).toBeUndefined();

  // Bytes that are not an image are refused by the server.
  const brokenPath = testInfo.outputPath('broken.png');
  fs.writeFileSync(brokenPath, 'this is not a PNG at all');
  await page.getByTestId('hero-file-input').setInputFiles(brokenPath);
  await expectToast(page, 'Upload failed', 'Failed to upload image. Please try again.');
  await expect(preview).toHaveCount(0);
});
