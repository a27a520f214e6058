/** Issue 14 in the browser: a conflicting save from two editors, History with diff and Restore, draft autosave, and the Trash tab. */
import { expect, test } from './fixtures.ts';
import { createArticle, expectToast, getArticle, gotoAdmin, signInPage, uniqueToken } from './admin-helpers.ts';

test(
  'two editors on one article: the second save is refused, says who changed it, compares and reloads',
  { tag: '@store' },
  async ({ browser }) => {
    const token = uniqueToken('conflict');
    const first = await browser.newContext();
    const second = await browser.newContext();
    try {
      const pageA = await first.newPage();
      const pageB = await second.newPage();
      await signInPage(pageA);
      await signInPage(pageB);
      const article = await createArticle(pageA.request, {
        title: `Shared story ${token}`,
        status: 'published',
        bodyHtml: '<p>The council met on Monday.</p>',
      });

      await gotoAdmin(pageA, `/admin/editor/${article.id}`);
      await gotoAdmin(pageB, `/admin/editor/${article.id}`);
      await expect(pageA.getByLabel('Article Body (HTML)')).toHaveValue('<p>The council met on Monday.</p>');
      await expect(pageB.getByLabel('Article Body (HTML)')).toHaveValue('<p>The council met on Monday.</p>');

      await pageA.getByLabel('Article Body (HTML)').fill('<p>The council met on Tuesday.</p>');
      await pageA.getByRole('button', { name: 'Update', exact: true }).click();
      await expectToast(pageA, 'Article updated');

      await pageB.getByLabel('Article Body (HTML)').fill('<p>The council met on Wednesday.</p>');
      await pageB.getByRole('button', { name: 'Update', exact: true }).click();
      const banner = pageB.getByTestId('editor-conflict');
      await expect(banner).toBeVisible();
      await expect(banner).toContainText('admin');
      await expect(banner).toContainText('Your changes are not saved');
      // Nothing was overwritten.
      expect((await getArticle(pageB.request, article.id)).bodyHtml).toBe('<p>The council met on Tuesday.</p>');

      await banner.getByRole('button', { name: 'Compare' }).click();
      const diff = banner.getByTestId('body-diff');
      await expect(diff.locator('del', { hasText: 'Tuesday' })).toBeVisible();
      await expect(diff.locator('ins', { hasText: 'Wednesday' })).toBeVisible();

      await banner.getByRole('button', { name: 'Reload their version' }).click();
      await expect(banner).toBeHidden();
      await expect(pageB.getByLabel('Article Body (HTML)')).toHaveValue('<p>The council met on Tuesday.</p>');
      await pageB.getByLabel('Title').fill(`Shared story, revised ${token}`);
      await pageB.getByRole('button', { name: 'Update', exact: true }).click();
      await expectToast(pageB, 'Article updated');
      const saved = await getArticle(pageB.request, article.id);
      expect(saved).toMatchObject({ title: `Shared story, revised ${token}`, bodyHtml: '<p>The council met on Tuesday.</p>', version: 3 });
    } finally {
      await first.close();
      await second.close();
    }
  },
);

test(
  'History shows every save with a diff, and Restore brings an earlier text back as a new revision',
  { tag: '@store' },
  async ({ page }) => {
    await signInPage(page);
    const token = uniqueToken('restore');
    const article = await createArticle(page.request, {
      title: `Restorable ${token}`,
      status: 'published',
      bodyHtml: '<p>Original wording of the story.</p>',
    });
    const rewritten = await page.request.put(`/api/articles/${article.id}`, {
      data: { bodyHtml: '<p>Rewritten wording of the story.</p>' },
    });
    expect(rewritten.status()).toBe(200);

    await gotoAdmin(page, `/admin/editor/${article.id}`);
    const history = page.getByTestId('revision-history');
    await expect(history.getByTestId('revision')).toHaveCount(2);
    await expect(history.getByTestId('revision').first()).toContainText('Revision 2 (current)');
    await history.getByTestId('revision').nth(1).getByRole('button', { name: 'View' }).click();
    const detail = history.getByTestId('revision-detail');
    await expect(detail.locator('del', { hasText: 'Original' })).toBeVisible();
    await expect(detail.locator('ins', { hasText: 'Rewritten' })).toBeVisible();

    await detail.getByRole('button', { name: 'Restore revision 1' }).click();
    await expectToast(page, 'Revision restored');
    await expect(page.getByLabel('Article Body (HTML)')).toHaveValue('<p>Original wording of the story.</p>');
    await expect(history.getByTestId('revision')).toHaveCount(3);
    await expect(history.getByTestId('revision').first()).toContainText('restored revision 1');
    expect(await getArticle(page.request, article.id)).toMatchObject({
      bodyHtml: '<p>Original wording of the story.</p>',
      version: 3,
      status: 'published',
    });
  },
);

test('a draft autosaves while typing, without publishing', { tag: '@store' }, async ({ page }) => {
  await signInPage(page);
  const article = await createArticle(page.request, { title: `Autosave ${uniqueToken('auto')}` });
  await gotoAdmin(page, `/admin/editor/${article.id}`);
  await page.getByLabel('Article Body (HTML)').pressSequentially('<p>Typed without saving</p>', { delay: 5 });
  await expect(page.getByTestId('autosave-status')).toBeVisible({ timeout: 15_000 });
  const saved = await getArticle(page.request, article.id);
  expect(saved).toMatchObject({ status: 'draft', bodyHtml: '<p>Body text.</p><p>Typed without saving</p>' });
  const revisions = (await (await page.request.get(`/api/articles/${article.id}/revisions`)).json()) as { autosave: boolean }[];
  expect(revisions.filter((r) => r.autosave)).toHaveLength(1);
});

test('a deleted article waits in the Trash tab and Restore brings it back', { tag: '@store' }, async ({ page }) => {
  await signInPage(page);
  const token = uniqueToken('trash');
  const article = await createArticle(page.request, { title: `Trashed ${token}`, status: 'published' });
  expect((await page.request.delete(`/api/articles/${article.id}`)).status()).toBe(204);
  await gotoAdmin(page, '/admin?tab=trash');
  const item = page.getByTestId('trash-item').filter({ hasText: `Trashed ${token}` });
  await expect(item).toContainText('Deleted by admin');
  await item.getByRole('button', { name: `Restore Trashed ${token}` }).click();
  await expectToast(page, 'Article restored');
  await expect(item).toHaveCount(0);
  expect(await getArticle(page.request, article.id)).toMatchObject({ slug: article.slug, status: 'published' });
});
