/** Search: empty states, query and section in the URL, results from the Pagefind index or the API fallback, pagination. */
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures.ts';
import type { Article } from '../../src/schemas/article.ts';
import { declineCookies, findArticle, waitForIsland } from './reader-support.ts';

async function openSearch(page: Page, query = ''): Promise<void> {
  await declineCookies(page);
  await page.goto(`/search${query}`);
  await waitForIsland(page, '#search-input');
}

/** A word of the title that is long enough to be distinctive. */
function keywordOf(article: Article): string {
  return article.title
    .split(/[^A-Za-z]+/)
    .filter((w) => w.length >= 6)
    .sort((a, b) => b.length - a.length)[0]!;
}

test('without a query: heading, box, chips, the prompt, noindex and canonical', async ({ page, site }) => {
  await openSearch(page);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Search Articles');
  await expect(page.getByRole('searchbox')).toHaveAttribute('placeholder', 'Search articles, topics, authors...');
  await expect(page.getByRole('button', { name: 'Search', exact: true })).toBeVisible();
  await expect(page.getByRole('group', { name: 'Filter by section' }).getByRole('button')).toHaveText([
    'All',
    'World',
    'Business',
    'Politics',
    'Tech',
    'Sports',
    'Culture',
    'Opinion',
  ]);
  await expect(page.getByRole('button', { name: 'All' })).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByText('Enter a search query to find articles')).toBeVisible();
  await expect(page).toHaveTitle('Search Articles | Meridian News');
  expect(await page.locator('meta[name="robots"]').getAttribute('content')).toBe('noindex, follow');
  expect(await page.locator('link[rel="canonical"]').getAttribute('href')).toBe(`${site.siteUrl}/search`);
});

test('a query finds the article from the search index, and lives in the URL', async ({ page, request }) => {
  const article = await findArticle(request, (a) => a.section === 'tech');
  const word = keywordOf(article);
  await openSearch(page);
  await page.getByRole('searchbox').fill(word);
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`/search\\?q=${word}$`));
  await expect(page.getByTestId('results-summary')).toContainText(`Showing results for: ${word}`);
  await expect(page.getByTestId('results-summary')).toContainText(/\(\d+ results?/);
  await expect(page).toHaveTitle(`Search Results for ${word} | Meridian News`);
  const grid = page.getByRole('list', { name: 'Search results' });
  await expect(grid).toHaveAttribute('data-engine', 'pagefind');
  const card = grid.getByTestId('article-card').filter({ has: page.getByRole('link', { name: article.title, exact: true }) });
  await expect(card).toHaveCount(1);
  await expect(card.getByRole('link', { name: 'Read Article →' })).toHaveAttribute('href', `/article/${article.slug}`);
  await expect(card.getByTestId('card-section')).toHaveText('Tech');

  // Reloading the URL gives the same search; the back button returns to the empty search.
  await page.reload();
  await expect(page.getByRole('searchbox')).toHaveValue(word);
  await expect(card).toHaveCount(1);
  await page.goBack();
  await expect(page.getByText('Enter a search query to find articles')).toBeVisible();
});

test('section chips filter the results and go into the URL', async ({ page, request }) => {
  const article = await findArticle(request, (a) => a.section === 'sports');
  const word = keywordOf(article);
  await openSearch(page, `?q=${encodeURIComponent(word)}`);
  await expect(page.getByRole('list', { name: 'Search results' })).toBeVisible();
  await page.getByRole('button', { name: 'Sports' }).click();
  await expect(page).toHaveURL(new RegExp(`section=sports`));
  await expect(page.getByRole('button', { name: 'Sports' })).toHaveAttribute('aria-pressed', 'true');
  const sections = page.getByRole('list', { name: 'Search results' }).getByTestId('card-section');
  await expect(sections.first()).toBeVisible();
  expect(new Set(await sections.allTextContents())).toEqual(new Set(['Sports']));
  await page.getByRole('button', { name: 'Culture' }).click();
  await expect(page).toHaveURL(/section=culture/);
  const cultureSections = await page.getByRole('list', { name: 'Search results' }).getByTestId('card-section').allTextContents();
  expect(cultureSections.every((s) => s === 'Culture')).toBe(true);
});

test('no match: the empty state names the query', async ({ page }) => {
  await openSearch(page, '?q=zzqxnomatchword');
  // A miss is the slowest search there is: the recent bundles hold nothing, so every older bundle is
  // merged before the answer (7 s did not always do on a machine also running the site and the tests).
  await expect(page.getByText('No articles found matching zzqxnomatchword')).toBeVisible({ timeout: 20_000 });
  await expect(page.getByTestId('results-summary')).toContainText('(0 results');
});

test('without the Pagefind index the API answers (results and count)', { tag: '@store' }, async ({ page, request }) => {
  await page.route('**/pagefind/periods.json', (route) => route.fulfill({ status: 404, body: 'not found' }));
  const article = await findArticle(request, (a) => a.section === 'business');
  const word = keywordOf(article);
  const count = (await (await request.get('/api/search/count', { params: { q: word, section: 'business' } })).json()) as { count: number };
  const searched = page.waitForRequest((r) => r.url().includes('/api/search?'));
  await openSearch(page, `?q=${encodeURIComponent(word)}&section=business`);
  expect(new URL((await searched).url()).searchParams.get('section')).toBe('business');
  const grid = page.getByRole('list', { name: 'Search results' });
  await expect(grid).toHaveAttribute('data-engine', 'api');
  await expect(grid.getByRole('link', { name: article.title, exact: true })).toBeVisible();
  await expect(page.getByTestId('results-summary')).toContainText(`(${count.count} result`);
});

test('pagination: 12 a page, page in the URL, scrolls to the top, a new query starts at page 1', async ({ page, request }) => {
  // A word of almost every demo article, so there are at least two pages.
  const count = (await (await request.get('/api/search/count', { params: { q: 'the' } })).json()) as { count: number };
  expect(count.count).toBeGreaterThan(12);
  await openSearch(page, '?q=the');
  const grid = page.getByRole('list', { name: 'Search results' });
  await expect(grid.getByTestId('article-card')).toHaveCount(12);
  const pager = page.getByRole('navigation', { name: 'Search result pages' });
  await expect(pager.getByRole('button', { name: '← Previous' })).toBeDisabled();
  const firstTitle = await grid.locator('.card-title').first().textContent();
  await pager.scrollIntoViewIfNeeded();
  expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(0);
  await pager.getByRole('button', { name: 'Page 2' }).click();
  await expect(page).toHaveURL(/[?&]page=2/);
  await expect(pager.getByRole('button', { name: 'Page 2' })).toHaveAttribute('aria-current', 'page');
  await expect(grid.locator('.card-title').first()).not.toHaveText(firstTitle!);
  await expect.poll(() => page.evaluate(() => window.scrollY)).toBe(0);
  const last = Number(
    await pager
      .getByRole('button', { name: /^Page \d+$/ })
      .last()
      .textContent(),
  );
  await pager.getByRole('button', { name: `Page ${last}` }).click();
  await expect(pager.getByRole('button', { name: 'Next →' })).toBeDisabled();
  await page.getByRole('searchbox').fill('news');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await expect(page).toHaveURL(/\/search\?q=news$/);
});

test('older bundles are merged eight first, the rest only when a page needs more', async ({ page, request }) => {
  const { periods } = (await (await request.get('/pagefind/periods.json')).json()) as { periods: string[] };
  // Twelve made-up closed months, each served from the files of the largest real bundle: the island sees
  // an archive of the newest bundle and twelve copies, so how far it merges shows in the requests it makes.
  const newest = periods[0]!;
  const pageCount = async (name: string) => {
    const entry = (await (await request.get(`/pagefind/${name}/pagefind-entry.json`)).json()) as {
      languages: Record<string, { page_count: number }>;
    };
    return Object.values(entry.languages).reduce((sum, language) => sum + language.page_count, 0);
  };
  const sizes = await Promise.all(periods.map(async (name) => [name, await pageCount(name)] as const));
  const largest = sizes.reduce((a, b) => (b[1] > a[1] ? b : a))[0];
  const copies = Array.from({ length: 12 }, (_, i) => `2001-${String(12 - i).padStart(2, '0')}`);
  await page.route('**/pagefind/periods.json', (route) => route.fulfill({ json: { periods: [newest, ...copies] } }));
  const merged = new Set<string>();
  await page.route(/\/pagefind\/2001-\d\d\//, (route) => {
    const url = route.request().url();
    const copy = /\/pagefind\/(2001-\d\d)\//.exec(url)![1]!;
    // Pagefind asks for the entry file with a cache-busting query.
    if (new URL(url).pathname.endsWith('/pagefind-entry.json')) merged.add(copy);
    return route.continue({ url: url.replace(`/pagefind/${copy}/`, `/pagefind/${largest}/`) });
  });
  // The newest bundle and three copies are the recent ones (RECENT_BUNDLES); the nine older copies wait.
  const recent = copies.slice(0, 3);
  const older = copies.slice(3);
  await openSearch(page, '?q=the');
  const grid = page.getByRole('list', { name: 'Search results' });
  await expect(grid.getByTestId('article-card')).toHaveCount(12, { timeout: 20_000 });
  const summary = page.getByTestId('results-summary');
  await expect(summary).toContainText('+ results');
  expect([...merged].sort()).toEqual([...recent].sort());
  // A page past what the recent ones hold merges the next eight (ARCHIVE_STEP), which fill it: not the ninth.
  const inRecent = Number(/\((\d+)\+ results/.exec((await summary.textContent())!)![1]);
  await page.goto(`/search?q=the&page=${Math.ceil(inRecent / 12) + 1}`);
  await waitForIsland(page, '#search-input');
  await expect(grid.getByTestId('article-card').first()).toBeVisible({ timeout: 20_000 });
  expect([...merged].sort()).toEqual([...recent, ...older.slice(0, 8)].sort());
  // A word in no article: every older bundle is merged before the answer.
  await page.goto('/search?q=zzqxnomatchword');
  await expect(page.getByText('No articles found matching zzqxnomatchword')).toBeVisible({ timeout: 20_000 });
  expect([...merged].sort()).toEqual([...copies].sort());
});
