/** The /admin dashboard: Overview stats and recent list, Article Manager, Comments and News Sources tabs. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import type { Article, ArticleStats } from '../../src/schemas/article.ts';
import type { Comment } from '../../src/schemas/comment.ts';
import type { NewsSource } from '../../src/schemas/source.ts';
import { APP_VERSION } from '../../src/server/version.ts';
import {
  answerNextConfirm,
  createArticle,
  expectToast,
  getArticle,
  gotoAdmin,
  signInPage,
  uniqueToken,
  waitForIsland,
} from './admin-helpers.ts';

test.beforeEach(async ({ page }) => {
  await signInPage(page);
});

async function openTab(page: Page, name: 'Overview' | 'Article Manager' | 'Comments' | 'News Sources') {
  await waitForIsland(page);
  await page.getByRole('tab', { name }).click();
  await expect(page.getByRole('tab', { name })).toHaveAttribute('aria-selected', 'true');
}

function statCard(page: Page, key: keyof ArticleStats) {
  return page.getByTestId(`stat-${key}`);
}

test.describe('Overview', () => {
  test('names the release the server runs at its foot', async ({ page }) => {
    await gotoAdmin(page, '/admin');
    await waitForIsland(page);
    await expect(page.getByTestId('app-version')).toBeVisible();
    await expect(page.getByTestId('app-version')).toHaveText(`Meridian News ${APP_VERSION}`);
  });

  test('stat cards show the server stats and follow new articles', { tag: '@store' }, async ({ page }) => {
    await createArticle(page.request, { title: `Stats draft ${uniqueToken('s')}` });
    const before = (await (await page.request.get('/api/articles/stats')).json()) as ArticleStats;
    await gotoAdmin(page, '/admin');
    await expect(statCard(page, 'totalArticles')).toContainText('Total Articles');
    await expect(statCard(page, 'totalArticles')).toContainText(String(before.totalArticles));
    await expect(statCard(page, 'published')).toContainText(`Published${before.published}`);
    await expect(statCard(page, 'drafts')).toContainText(`Drafts${before.drafts}`);
    await expect(statCard(page, 'scheduled')).toContainText(`Scheduled${before.scheduled}`);

    await createArticle(page.request, { title: `Stats draft 2 ${uniqueToken('s')}` });
    await createArticle(page.request, {
      title: `Stats scheduled ${uniqueToken('s')}`,
      status: 'scheduled',
      scheduledFor: new Date(Date.now() + 7 * 86_400_000).toISOString(),
    });
    await page.reload();
    await waitForIsland(page);
    await expect(statCard(page, 'drafts')).toContainText(`Drafts${before.drafts + 1}`);
    await expect(statCard(page, 'scheduled')).toContainText(`Scheduled${before.scheduled + 1}`);
    await expect(statCard(page, 'totalArticles')).toContainText(`Total Articles${before.totalArticles + 2}`);
  });

  test('recent articles: at most 10, edit opens the editor, delete asks first', async ({ page }) => {
    const title = `Recent ${uniqueToken('r')}`;
    const article = await createArticle(page.request, { title });
    await gotoAdmin(page, '/admin');
    const rows = page.getByTestId('recent-article');
    await expect(rows.first()).toBeVisible();
    expect(await rows.count()).toBeLessThanOrEqual(10);
    const row = rows.filter({ hasText: title });
    await expect(row).toHaveCount(1);
    await expect(row.getByRole('link', { name: `Edit ${title}` })).toHaveAttribute('href', `/admin/editor/${article.id}`);

    // Dismissing the confirmation keeps the article.
    let deletes = 0;
    page.on('request', (req) => {
      if (req.method() === 'DELETE') deletes++;
    });
    const dismissed = answerNextConfirm(page, false);
    await row.getByRole('button', { name: `Delete ${title}` }).click();
    expect(await dismissed).toContain(title);
    expect(deletes).toBe(0);
    await expect(row).toHaveCount(1);

    const accepted = answerNextConfirm(page, true);
    await row.getByRole('button', { name: `Delete ${title}` }).click();
    await accepted;
    await expectToast(page, 'Article deleted');
    await expect(rows.filter({ hasText: title })).toHaveCount(0);
    expect((await page.request.get(`/api/articles/${article.id}`)).status()).toBe(404);
  });

  test('New Article goes to the editor and Edit goes to the article', async ({ page }) => {
    const title = `Edit link ${uniqueToken('e')}`;
    const article = await createArticle(page.request, { title });
    await gotoAdmin(page, '/admin');
    await page
      .getByTestId('recent-article')
      .filter({ hasText: title })
      .getByRole('link', { name: `Edit ${title}` })
      .click();
    await expect(page).toHaveURL(new RegExp(`/admin/editor/${article.id}$`));
    await gotoAdmin(page, '/admin');
    await page.getByRole('link', { name: 'New Article' }).click();
    await expect(page).toHaveURL(/\/admin\/editor$/);
    await expect(page.getByRole('heading', { name: 'Create New Article' })).toBeVisible();
  });
});

test.describe('Article Manager', () => {
  test('filters, 12 a page, reset', { tag: '@store' }, async ({ page }) => {
    const token = uniqueToken('mgr');
    const source = `Wire${token}`;
    for (let i = 1; i <= 13; i++) {
      await createArticle(page.request, { title: `${token} tech story ${i}`, section: 'tech', status: 'published', sourceLabel: source });
    }
    await createArticle(page.request, { title: `${token} sports draft`, section: 'sports', status: 'draft' });
    await createArticle(page.request, { title: `${token} archived piece`, section: 'world', status: 'published' }).then((a) =>
      page.request.put(`/api/articles/${a.id}`, { data: { status: 'archived' } }),
    );

    await gotoAdmin(page, '/admin');
    await openTab(page, 'Article Manager');
    await expect(page).toHaveURL(/\?tab=articles$/);
    await expect(page.getByRole('link', { name: 'New Article' })).toBeVisible();
    const cards = page.getByTestId('manager-article');
    const count = page.getByTestId('manager-count');

    await page.getByRole('searchbox', { name: 'Search', exact: true }).fill(token);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect(count).toHaveText('15 articles');
    await expect(cards).toHaveCount(12);
    const pages = page.getByRole('navigation', { name: 'Article pages' });
    await expect(pages.getByRole('button', { name: 'Previous' })).toBeDisabled();
    await pages.getByRole('button', { name: 'Next' }).click();
    await expect(pages.getByRole('button', { name: 'Page 2' })).toHaveAttribute('aria-current', 'page');
    await expect(cards).toHaveCount(3);
    await expect(pages.getByRole('button', { name: 'Next' })).toBeDisabled();

    await page.getByRole('combobox', { name: 'Status', exact: true }).selectOption('draft');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect(count).toHaveText('1 article');
    await expect(cards).toHaveCount(1);
    await expect(cards.first()).toContainText(`${token} sports draft`);
    await expect(pages).toHaveCount(0);

    await page.getByRole('combobox', { name: 'Status', exact: true }).selectOption('archived');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect(cards).toHaveCount(1);
    await expect(cards.first()).toContainText(`${token} archived piece`);

    await page.getByRole('combobox', { name: 'Status', exact: true }).selectOption('');
    await page.getByRole('combobox', { name: 'Section', exact: true }).selectOption('sports');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect(count).toHaveText('1 article');

    await page.getByRole('combobox', { name: 'Section', exact: true }).selectOption('');
    await page.getByRole('searchbox', { name: 'Search', exact: true }).fill('');
    await page.getByLabel('Source').fill(source);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect(count).toHaveText('13 articles');

    const today = new Date();
    const day = (d: Date) => `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
    const tomorrow = new Date(today.getFullYear(), today.getMonth(), today.getDate() + 1);
    await page.getByLabel('Date from').fill(day(tomorrow));
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect(page.getByText('No articles match these filters.')).toBeVisible();
    await page.getByLabel('Date from').fill(day(today));
    await page.getByLabel('Date to').fill(day(today));
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect(count).toHaveText('13 articles');

    await page.getByRole('button', { name: 'Reset' }).click();
    await expect(page.getByLabel('Source')).toHaveValue('');
    await expect(page.getByLabel('Date from')).toHaveValue('');
    const all = (await (await page.request.get('/api/articles/count')).json()) as { count: number };
    await expect(count).toHaveText(`${all.count} articles`);
  });

  test('unpublish, republish, adjust votes and delete', { tag: '@store' }, async ({ page }) => {
    const token = uniqueToken('act');
    const article = await createArticle(page.request, { title: `${token} votes`, status: 'published' });
    await gotoAdmin(page, '/admin?tab=articles');
    await page.getByRole('searchbox', { name: 'Search', exact: true }).fill(token);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const card = page.getByTestId('manager-article').filter({ hasText: `${token} votes` });
    await expect(card).toHaveCount(1);

    await card.getByRole('button', { name: 'Unpublish' }).click();
    await expect(card.getByRole('button', { name: 'Republish' })).toBeVisible();
    await expect(card.locator('.adm-badge-archived')).toHaveText('archived');
    expect((await getArticle(page.request, article.id)).status).toBe('archived');
    await card.getByRole('button', { name: 'Republish' }).click();
    await expect(card.getByRole('button', { name: 'Unpublish' })).toBeVisible();
    expect((await getArticle(page.request, article.id)).status).toBe('published');

    const adjustCalls: string[] = [];
    page.on('request', (req) => {
      if (req.url().includes('/adjust-')) adjustCalls.push(req.postData() ?? '');
    });
    const likes = card.getByRole('spinbutton', { name: 'Adjust likes' });
    await likes.fill('5');
    await card.getByRole('button', { name: 'Adjust likes' }).click();
    await expect(card.getByTestId('likes')).toHaveText('5');
    await likes.fill('-2');
    await card.getByRole('button', { name: 'Adjust likes' }).click();
    await expect(card.getByTestId('likes')).toHaveText('3');
    expect((await getArticle(page.request, article.id)).likes).toBe(3);
    // Not a non-zero integer: nothing is sent.
    for (const value of ['0', '1.5']) {
      await likes.fill(value);
      await card.getByRole('button', { name: 'Adjust likes' }).click();
    }
    await card.getByRole('spinbutton', { name: 'Adjust dislikes' }).fill('4');
    await card.getByRole('button', { name: 'Adjust dislikes' }).click();
    await expect(card.getByTestId('dislikes')).toHaveText('4');
    expect(adjustCalls).toEqual(['{"amount":5}', '{"amount":-2}', '{"amount":4}']);
    expect((await getArticle(page.request, article.id)).likes).toBe(3);

    const dismissed = answerNextConfirm(page, false);
    await card.getByRole('button', { name: 'Delete' }).click();
    await dismissed;
    await expect(card).toHaveCount(1);
    const accepted = answerNextConfirm(page, true);
    await card.getByRole('button', { name: 'Delete' }).click();
    await accepted;
    await expectToast(page, 'Article deleted');
    await expect(card).toHaveCount(0);
    expect((await page.request.get(`/api/articles/${article.id}`)).status()).toBe(404);
  });

  test('failures show their toasts', async ({ page }) => {
    const token = uniqueToken('fail');
    const first = await createArticle(page.request, { title: `${token} first`, status: 'published' });
    const second = await createArticle(page.request, { title: `${token} second`, status: 'published' });
    await gotoAdmin(page, '/admin?tab=articles');
    await page.getByRole('searchbox', { name: 'Search', exact: true }).fill(token);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const cards = page.getByTestId('manager-article');
    await expect(cards).toHaveCount(2);

    // The server refuses an adjustment beyond its limit.
    const firstCard = cards.filter({ hasText: `${token} first` });
    await firstCard.getByRole('spinbutton', { name: 'Adjust likes' }).fill('2000000');
    await firstCard.getByRole('button', { name: 'Adjust likes' }).click();
    await expectToast(page, 'Error', 'Failed to adjust likes.');
    await firstCard.getByRole('spinbutton', { name: 'Adjust dislikes' }).fill('-2000000');
    await firstCard.getByRole('button', { name: 'Adjust dislikes' }).click();
    await expectToast(page, 'Error', 'Failed to adjust dislikes.');

    // Deleted behind the page's back: acting on the stale cards fails.
    expect((await page.request.delete(`/api/articles/${first.id}`)).status()).toBe(204);
    expect((await page.request.delete(`/api/articles/${second.id}`)).status()).toBe(204);
    await firstCard.getByRole('button', { name: 'Unpublish' }).click();
    await expectToast(page, 'Error', 'Failed to update article status.');

    const fourth = await createArticle(page.request, { title: `${token} fourth`, status: 'draft' });
    await page.reload();
    await waitForIsland(page);
    await page.getByRole('searchbox', { name: 'Search', exact: true }).fill(token);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await expect(cards).toHaveCount(1);
    expect((await page.request.delete(`/api/articles/${fourth.id}`)).status()).toBe(204);
    const accepted = answerNextConfirm(page, true);
    await cards.first().getByRole('button', { name: 'Delete' }).click();
    await accepted;
    await expectToast(page, 'Error', 'Failed to delete article.');
  });
});

test.describe('Comments', () => {
  test('search, status filter, hide, unhide and delete', { tag: '@store' }, async ({ page }) => {
    const token = uniqueToken('cmt');
    const article = await createArticle(page.request, { title: `${token} discussed`, status: 'published' });
    for (const who of ['Ada', 'Grace']) {
      const response = await page.request.post(`/api/articles/${article.id}/comments`, {
        data: { authorName: `${who} ${token}`, authorEmail: `${who.toLowerCase()}@example.com`, content: `${who} says ${token} is great.` },
      });
      expect(response.status()).toBe(201);
    }

    await gotoAdmin(page, '/admin');
    await openTab(page, 'Comments');
    await expect(page.getByRole('link', { name: 'New Article' })).toHaveCount(0);
    await page.getByLabel('Search comments').fill(token);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const cards = page.getByTestId('admin-comment');
    await expect(cards).toHaveCount(2);
    const ada = cards.filter({ hasText: `Ada ${token}` });
    await expect(ada).toContainText('ada@example.com');
    await expect(ada).toContainText(`Ada says ${token} is great.`);
    await expect(ada.locator('.adm-badge')).toHaveText('visible');
    await expect(ada.locator('time')).toHaveAttribute('datetime', /^\d{4}-\d{2}-\d{2}T/);

    await ada.getByRole('button', { name: 'Hide' }).click();
    await expect(ada.locator('.adm-badge')).toHaveText('hidden');
    await expect(ada.getByRole('button', { name: 'Unhide' })).toBeVisible();
    const hidden = (await (await page.request.get(`/api/admin/comments?search=${token}&status=hidden`)).json()) as Comment[];
    expect(hidden.map((c) => c.authorName)).toEqual([`Ada ${token}`]);

    await page.getByRole('combobox', { name: 'Status', exact: true }).selectOption('hidden');
    await expect(cards).toHaveCount(1);
    await expect(cards.first()).toContainText(`Ada ${token}`);
    await page.getByRole('combobox', { name: 'Status', exact: true }).selectOption('visible');
    await expect(cards).toHaveCount(1);
    await expect(cards.first()).toContainText(`Grace ${token}`);
    await page.getByRole('combobox', { name: 'Status', exact: true }).selectOption('');
    await expect(cards).toHaveCount(2);

    await ada.getByRole('button', { name: 'Unhide' }).click();
    await expect(ada.locator('.adm-badge')).toHaveText('visible');

    const dismissed = answerNextConfirm(page, false);
    await ada.getByRole('button', { name: 'Delete' }).click();
    await dismissed;
    await expect(cards).toHaveCount(2);
    const accepted = answerNextConfirm(page, true);
    await ada.getByRole('button', { name: 'Delete' }).click();
    await accepted;
    await expectToast(page, 'Comment deleted');
    await expect(cards).toHaveCount(1);

    // A comment removed behind the page's back: hiding it fails with the catalogue's text.
    const grace = cards.first();
    const [remaining] = (await (await page.request.get(`/api/admin/comments?search=${token}`)).json()) as Comment[];
    expect((await page.request.delete(`/api/comments/${remaining!.id}`)).status()).toBe(204);
    await grace.getByRole('button', { name: 'Hide' }).click();
    await expectToast(page, 'Error', 'Failed to hide comment. Please try again.');
  });
});

/** A real RSS feed on a local port (the server may fetch private addresses in e2e). */
async function startFeedServer(token: string): Promise<{ url: string; close: () => Promise<void> }> {
  const feed = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>Feed ${token}</title><link>http://127.0.0.1/</link><description>Test feed</description>
<item><title>${token} first headline</title><link>http://127.0.0.1/a/${token}-1</link><guid>${token}-1</guid><pubDate>${new Date().toUTCString()}</pubDate><description>First story.</description></item>
<item><title>${token} second headline</title><link>http://127.0.0.1/a/${token}-2</link><guid>${token}-2</guid><pubDate>${new Date().toUTCString()}</pubDate><description>Second story.</description></item>
</channel></rss>`;
  const server = http.createServer((req, res) => {
    if (req.url === '/feed.xml') {
      res.writeHead(200, { 'Content-Type': 'application/rss+xml; charset=utf-8' });
      res.end(feed);
    } else {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('not here');
    }
  });
  // Ports 5351-5399 are this project's test range (5350 is the e2e server).
  for (let port = 5351; port < 5400; port++) {
    const ok = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (ok) {
      const { port: bound } = server.address() as AddressInfo;
      return { url: `http://127.0.0.1:${bound}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
    }
  }
  throw new Error('No free port for the feed server');
}

test.describe('News Sources', () => {
  test('empty state, add with validation, toggle, fetch now, failures and delete', { tag: '@store' }, async ({ page }) => {
    const token = uniqueToken('src');
    const feedServer = await startFeedServer(token);
    try {
      for (const source of (await (await page.request.get('/api/news-sources')).json()) as NewsSource[]) {
        expect((await page.request.delete(`/api/news-sources/${source.id}`)).status()).toBe(204);
      }
      await gotoAdmin(page, '/admin');
      await openTab(page, 'News Sources');
      await expect(page.getByText('No news sources configured yet.')).toBeVisible();

      let posts = 0;
      page.on('request', (req) => {
        if (req.method() === 'POST' && new URL(req.url()).pathname === '/api/news-sources') posts++;
      });
      const form = page.getByRole('form', { name: 'Add news source' });
      await expect(form).toHaveCount(0);
      await page.getByRole('button', { name: 'Add Source' }).click();
      await expect(form).toBeVisible();
      await form.getByLabel('URL *').fill(`${feedServer.url}/feed.xml`);
      await form.getByRole('button', { name: 'Add Source' }).click();
      await expectToast(page, 'Validation error', 'Please fill in all required fields.');
      expect(posts).toBe(0);

      await form.getByLabel('Name *').fill(`Feed ${token}`);
      await form.getByLabel('Section *').selectOption('tech');
      await form.getByRole('button', { name: 'Add Source' }).click();
      await expect(form).toHaveCount(0);
      const sources = page.getByTestId('news-source');
      const rss = sources.filter({ hasText: `Feed ${token}` });
      await expect(rss).toContainText('RSS');
      await expect(rss).toContainText('tech');
      await expect(rss).toContainText('Last fetched: never');

      // Reopened, the form is reset with the section back to world.
      await page.getByRole('button', { name: 'Add Source' }).click();
      await expect(form.getByLabel('Name *')).toHaveValue('');
      await expect(form.getByLabel('Section *')).toHaveValue('world');
      await expect(form.getByLabel('Type')).toHaveValue('rss');
      // The same URL again is refused by the server.
      await form.getByLabel('Name *').fill('Duplicate');
      await form.getByLabel('URL *').fill(`${feedServer.url}/feed.xml`);
      await form.getByRole('button', { name: 'Add Source' }).click();
      await expectToast(page, 'Error', 'Failed to add news source.');
      await expect(form).toBeVisible();

      // An API source is listed but never offers Fetch Now.
      await form.getByLabel('Name *').fill(`Api ${token}`);
      await form.getByLabel('Type').selectOption('api');
      await form.getByLabel('URL *').fill(`${feedServer.url}/api`);
      await form.getByRole('button', { name: 'Add Source' }).click();
      const apiSource = sources.filter({ hasText: `Api ${token}` });
      await expect(apiSource).toContainText('API (Future)');
      await expect(apiSource.getByRole('button', { name: 'Fetch Now' })).toHaveCount(0);

      await rss.getByRole('button', { name: 'Fetch Now' }).click();
      await expectToast(page, 'Feed fetched', 'Fetched 2 items, 2 new');
      await expect(rss).not.toContainText('Last fetched: never');
      const fetched = (await (await page.request.get(`/api/articles?search=${token}`)).json()) as Article[];
      expect(fetched).toHaveLength(2);

      const toggle = rss.getByRole('switch', { name: `Enable Feed ${token}` });
      await expect(toggle).toBeChecked();
      await toggle.uncheck();
      await expect(rss.getByRole('button', { name: 'Fetch Now' })).toHaveCount(0);
      await expect(rss).toContainText('Disabled');
      const afterToggle = (await (await page.request.get('/api/news-sources')).json()) as NewsSource[];
      expect(afterToggle.find((s) => s.name === `Feed ${token}`)?.enabled).toBe(false);
      await toggle.check();
      await expect(rss.getByRole('button', { name: 'Fetch Now' })).toBeVisible();

      // A feed that answers 404: failure toast and the error on the source.
      await page.getByRole('button', { name: 'Add Source' }).click();
      await form.getByLabel('Name *').fill(`Broken ${token}`);
      await form.getByLabel('URL *').fill(`${feedServer.url}/missing.xml`);
      await form.getByRole('button', { name: 'Add Source' }).click();
      const broken = sources.filter({ hasText: `Broken ${token}` });
      await broken.getByRole('button', { name: 'Fetch Now' }).click();
      await expectToast(page, 'Error', 'Failed to fetch RSS feed.');
      await expect(broken.getByTestId('source-error')).toContainText('Last error:');

      const dismissed = answerNextConfirm(page, false);
      await apiSource.getByRole('button', { name: 'Delete' }).click();
      await dismissed;
      await expect(apiSource).toHaveCount(1);
      const accepted = answerNextConfirm(page, true);
      await apiSource.getByRole('button', { name: 'Delete' }).click();
      await accepted;
      await expectToast(page, 'News source deleted');
      await expect(apiSource).toHaveCount(0);
      const remaining = (await (await page.request.get('/api/news-sources')).json()) as NewsSource[];
      expect(remaining.map((s) => s.name).sort()).toEqual([`Broken ${token}`, `Feed ${token}`]);
    } finally {
      await feedServer.close();
    }
  });
});
