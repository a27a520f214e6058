/**
 * The editor's live panel (issue 35): start the coverage, pin key points, post, edit and delete
 * updates with their toasts, save the article meanwhile without a conflict, end the coverage; axe on
 * the panel, and the panel on a 375 px phone without sideways scrolling.
 */
import { expectNoSeriousViolations } from './axe.ts';
import { expect, test } from './fixtures.ts';
import { answerNextConfirm, createArticle, expectToast, gotoAdmin, signInPage, uniqueToken } from './admin-helpers.ts';

test(
  'start, key points, post, edit, delete and end, with the article saved meanwhile without a 409',
  { tag: '@store' },
  async ({ page }) => {
    await signInPage(page);
    const article = await createArticle(page.request, { title: `Live panel ${uniqueToken('')}`, status: 'published' });
    await gotoAdmin(page, `/admin/editor/${article.id}`);
    const panel = page.getByTestId('live-panel');
    await expect(page.getByTestId('live-panel-status')).toContainText('Not live');

    await panel.getByRole('button', { name: 'Start live coverage' }).click();
    await expectToast(page, 'Live coverage started');
    await expect(page.getByTestId('live-panel-status')).toContainText('Live since');

    await page.getByTestId('live-key-points-input').fill('Evacuations ordered\nBridge closed');
    await panel.getByRole('button', { name: 'Save key points' }).click();
    await expectToast(page, 'Key points saved');

    await page.getByTestId('live-update-text').fill('Crews are on the scene.\n\nMore soon.');
    await panel.getByRole('switch', { name: 'Breaking' }).check();
    await page.getByTestId('live-post').click();
    await expectToast(page, 'Update posted', 'Readers on the page see it within seconds.');
    const rows = page.getByTestId('live-panel-update');
    await expect(rows).toHaveCount(1);
    await expect(rows.first()).toContainText('Crews are on the scene.');
    await expect(rows.first()).toContainText('Breaking');
    await expect(page.getByTestId('live-update-text')).toHaveValue('');
    await expectNoSeriousViolations(page, { include: '[data-testid="live-panel"]' });

    // The editor still holds the version it opened: an update was no article save.
    await page.getByLabel('Deck (Summary)').fill('Saved while the coverage runs');
    await page.getByRole('button', { name: 'Update', exact: true }).click();
    await expectToast(page, 'Article updated', 'Your article has been updated successfully.');

    await rows.first().getByRole('button', { name: /^Edit/ }).click();
    await page.getByTestId('live-edit-text').fill('<p>Crews have the fire under control.</p>');
    await panel.getByRole('button', { name: 'Save update' }).click();
    await expectToast(page, 'Update saved');
    await expect(rows.first()).toContainText('Crews have the fire under control.');

    const deleteAsked = answerNextConfirm(page, true);
    await rows
      .first()
      .getByRole('button', { name: /^Delete/ })
      .click();
    expect(await deleteAsked).toMatch(/cannot be undone/);
    await expectToast(page, 'Update deleted');
    await expect(rows).toHaveCount(0);

    const endAsked = answerNextConfirm(page, true);
    await panel.getByRole('button', { name: 'End live coverage' }).click();
    expect(await endAsked).toMatch(/End the live coverage/);
    await expectToast(page, 'Live coverage ended');
    await expect(page.getByTestId('live-panel-status')).toContainText('Ended');
    await expect(page.getByTestId('live-post')).toHaveCount(0);
    await expect(panel.getByRole('button', { name: 'Resume live coverage' })).toBeVisible();

    const audit = (await (await page.request.get('/api/audit?pageSize=50')).json()) as {
      items: { action: string; target: { id: string } }[];
    };
    expect(audit.items.filter((e) => e.target.id === article.id).map((e) => e.action)).toEqual(
      expect.arrayContaining(['live.start', 'live.key-points', 'live.update.create', 'live.update.edit', 'live.update.delete', 'live.end']),
    );
  },
);

test.describe('on a 375 px phone', () => {
  test.use({ viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true });

  test('the live panel fits without scrolling sideways', async ({ page }) => {
    await signInPage(page);
    const article = await createArticle(page.request, { title: `Live phone ${uniqueToken('')}`, status: 'published' });
    await page.request.put(`/api/articles/${article.id}/live`, {
      data: { status: 'live', keyPoints: ['Averyveryverylongkeypointwithoutanyspaces'] },
    });
    await page.request.post(`/api/articles/${article.id}/updates`, {
      data: { bodyHtml: '<p>Anupdatewithaveryveryverylongwordwithoutspacesinit.</p>' },
    });
    await gotoAdmin(page, `/admin/editor/${article.id}`);
    await expect(page.getByTestId('live-panel-update')).toHaveCount(1);
    const { overflow, culprits } = await page.evaluate(() => {
      const width = document.documentElement.clientWidth;
      // The deepest elements sticking out name the cause in the failure message.
      const culprits = [...document.querySelectorAll('body *')]
        .filter(
          (el) =>
            el.getBoundingClientRect().right > width + 1 && ![...el.children].some((c) => c.getBoundingClientRect().right > width + 1),
        )
        .slice(0, 5)
        .map((el) => `${el.tagName.toLowerCase()}.${[...el.classList].join('.')} right=${Math.round(el.getBoundingClientRect().right)}`);
      return { overflow: document.documentElement.scrollWidth - width, culprits };
    });
    expect(overflow, culprits.join('; ')).toBeLessThanOrEqual(0);
  });
});
