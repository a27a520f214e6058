/**
 * Copy that reads right (issue 37): every page type and the two mails, read as the browser lays them
 * out, on a desktop and a phone, in the light and the dark theme, with no word glued to a link or a
 * bold word, no doubled space or punctuation, and no link or button without a name.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { APIRequestContext, Page } from '@playwright/test';
import { expect, siteIsIdle, test, type Site } from './fixtures.ts';
import { simpleParser } from 'mailparser';
import { findCopyProblems, formatCopyFindings, type CopyFinding } from './copy-check.ts';
import { createArticle, declineCookies, signIn, signInPage, uniqueToken } from './reader-support.ts';
import type { Article } from '../../src/schemas/article.ts';

const DESKTOP = { width: 1280, height: 720 };
const PHONE = { width: 375, height: 812 };
const STATIC_PAGES = ['/about', '/contact', '/terms', '/privacy', '/cookies', '/accessibility', '/careers', '/press'];

async function readPage(page: Page): Promise<CopyFinding[]> {
  return page.evaluate(findCopyProblems, null);
}

async function expectReadsRight(page: Page, where: string): Promise<void> {
  const findings = await readPage(page);
  expect.soft(findings, `${where} does not read right:\n${formatCopyFindings(findings)}`).toEqual([]);
}

/** Reads the page on a desktop and a phone, then in the other theme (the header's toggle, no reload) on both again. */
async function expectReadsRightInEveryView(page: Page, where: string): Promise<void> {
  for (const pass of [1, 2]) {
    const html = page.locator('html');
    if (pass === 2) {
      const wasDark = (await html.getAttribute('data-theme')) === 'dark';
      await page.setViewportSize(DESKTOP);
      await page.getByTestId('theme-toggle').click();
      if (wasDark) await expect(html).not.toHaveAttribute('data-theme', 'dark');
      else await expect(html).toHaveAttribute('data-theme', 'dark');
    }
    const theme = (await html.getAttribute('data-theme')) === 'dark' ? 'dark' : 'light';
    for (const [device, size] of [
      ['desktop', DESKTOP],
      ['phone', PHONE],
    ] as const) {
      await page.setViewportSize(size);
      await expectReadsRight(page, `${where} (${theme}, ${device})`);
    }
  }
  await page.setViewportSize(DESKTOP);
}

/** Waits until the islands have hydrated and what they load has arrived, so their text is read, not their placeholders. */
async function settle(page: Page): Promise<void> {
  // Every island waiting to be seen is brought into view in turn (one pass, not one island per retry).
  await expect(async () => {
    await page.evaluate(async () => {
      for (const island of document.querySelectorAll('astro-island[ssr] > :first-child')) {
        island.scrollIntoView({ block: 'center' });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    });
    await expect(page.locator('astro-island[ssr]')).toHaveCount(0, { timeout: 500 });
  }).toPass({ timeout: 20_000 });
  await expect(page.locator('.adm-spinner, .results-loading, [aria-busy="true"]')).toHaveCount(0);
  await expect(page.getByText(/^Loading .*…$/)).toHaveCount(0);
  await expect(page.locator('.adm-stat-value').filter({ hasText: /^…$/ })).toHaveCount(0);
}

async function visit(page: Page, url: string, where = url): Promise<void> {
  await page.goto(url);
  await settle(page);
  await expectReadsRightInEveryView(page, where);
}

/** A published article with what an article page can show: a linked source, comments and a correction. */
async function createFullArticle(request: APIRequestContext, token: string): Promise<Article> {
  const article = await createArticle(request, {
    title: `Harbour pilots ${token} return to the night shift`,
    dek: 'After a month of trials, the port brings back its night pilots, with new rules on rest.',
    bodyHtml: [
      '<p>The port authority said on Monday that <strong>night pilotage</strong> resumes next week, after a trial the <a href="/section/business">business desk</a> followed.</p>',
      '<blockquote><p>“We listened to the crews,” the harbour master said.</p></blockquote>',
      '<ul><li>Two pilots a shift</li><li>Rest of <em>at least</em> eleven hours</li></ul>',
    ].join('\n'),
    section: 'world',
    tags: ['ports', 'shipping'],
    authorName: 'Ines Calder',
    sourceLabel: 'Harbour Gazette',
    sourceUrl: 'https://news.example.com/harbour-pilots',
    status: 'published',
    isEditorsPick: true,
  });
  for (const [authorName, content] of [
    ['Joanna Petrov', 'Good news for the crews. Eleven hours is the least they need.'],
    ['Tom Ashby', 'About time: the night queue was costing the port a fortune.'],
  ] as const) {
    const response = await request.post(`/api/articles/${article.id}/comments`, {
      data: { authorName, authorEmail: 'reader@example.com', content },
    });
    expect(response.status()).toBe(201);
  }
  const correction = 'An earlier version of this article gave the wrong date for the restart.';
  expect((await request.post(`/api/articles/${article.id}/corrections`, { data: { text: correction } })).status()).toBe(201);
  // The pages are written by the server's worker: wait until they carry the correction.
  for (const url of [`/article/${article.slug}`, '/corrections']) {
    await expect
      .poll(async () => {
        const response = await request.get(url);
        return response.status() === 200 && (await response.text()).includes(correction);
      })
      .toBe(true);
  }
  return article;
}

/** The newest published article nobody has commented on (the comments' empty state). */
async function findUncommentedArticle(request: APIRequestContext): Promise<Article> {
  const response = await request.get('/api/articles', { params: { pageSize: 20 } });
  expect(response.status()).toBe(200);
  for (const article of (await response.json()) as Article[]) {
    const comments = (await (await request.get(`/api/articles/${article.id}/comments`)).json()) as unknown[];
    if (comments.length === 0) return article;
  }
  throw new Error('The demo content should have an article without comments');
}

/** The mails the e2e site wrote to its outbox for one address, parsed as a mail client would. */
async function readOutbox(site: Site, address: string): Promise<{ subject: string; html: string; text: string }[]> {
  const dir = path.join(site.dataDir, 'outbox');
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.includes(address)) : [];
  return Promise.all(
    files.sort().map(async (file) => {
      const mail = await simpleParser(fs.readFileSync(path.join(dir, file)));
      return { subject: mail.subject ?? '', html: typeof mail.html === 'string' ? mail.html : '', text: mail.text ?? '' };
    }),
  );
}

/** Reads a mail as its reader sees it: the HTML part on a desktop and a phone, the plain-text part as it is. */
async function expectMailReadsRight(page: Page, mail: { subject: string; html: string; text: string }, where: string): Promise<void> {
  expect(mail.html, `${where} has an HTML part`).not.toBe('');
  await page.setContent(mail.html);
  for (const [device, size] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    await page.setViewportSize(size);
    await expectReadsRight(page, `${where}, HTML (${device})`);
  }
  await page.setViewportSize(DESKTOP);
  // The text part in a box that keeps its line breaks and spaces, as a plain-text mail client shows it.
  await page.setContent('<main style="white-space: pre-wrap"></main>');
  await page.locator('main').evaluate((main, text) => (main.textContent = text), `${mail.subject}\n\n${mail.text}`);
  await expectReadsRight(page, `${where}, subject and text part`);
}

test.describe('the checker', () => {
  // Each case: the HTML, then the rules it must break (in order), none for a case that reads right.
  const cases: [string, string, CopyFinding['rule'][]][] = [
    [
      'the cookie banner of issue 37',
      '<section class="cookie-banner"><h2>We value your privacy</h2><p>We use a first-party cookie to count page views and improve our journalism. No advertising or third-party trackers.<a href="/cookies">Cookie Policy</a></p></section>',
      ['glued'],
    ],
    ['the banner with its space', '<p>No advertising or third-party trackers. <a href="/cookies">Cookie Policy</a></p>', []],
    [
      'the banner with a line break in the source',
      '<p>No advertising or third-party trackers.\n    <a href="/cookies">Cookie Policy</a></p>',
      [],
    ],
    ['a word glued to a bold name', '<p>Signed in as<strong>admin</strong></p>', ['glued']],
    ['a link glued to the next word', '<p>Read the <a href="/terms">terms</a>and the policy.</p>', ['glued']],
    ['a button glued to the next word', '<p>Hi <button type="button">Reply</button>now</p>', ['glued']],
    [
      'a title glued to an upper-case badge (text-transform)',
      '<div><span>Withdrawn story</span><span><span style="display:inline-flex;text-transform:uppercase">draft</span> Deleted by admin</span></div>',
      ['glued'],
    ],
    [
      'a sentence run into the next in one element',
      '<p id="p"></p><script>document.getElementById("p").append("Saved.", "Next")</script>',
      ['glued'],
    ],
    [
      'a word built from parts in one element',
      '<p id="p"></p><script>document.getElementById("p").append("3 subscriber", "s")</script>',
      [],
    ],
    [
      'punctuation after a link',
      '<p>See the <a href="/a">policy</a>. Or <a href="/b">this</a>, <a href="/c">that</a>; <a href="/d">and</a>’s</p>',
      [],
    ],
    ['a parenthesis or a quote before a link', '<p>(<a href="/a">details</a>) and “<a href="/b">the title</a>”</p>', []],
    ['label and value laid out apart (flex)', '<div style="display:flex;gap:8px"><span>Published</span><strong>12</strong></div>', []],
    ['a hidden word', '<p>Comments<span hidden>draft</span></p>', []],
    ['a footnote mark and a search highlight', '<p>Rates rose<sup>1</sup> as <mark>clim</mark>ate talks began</p>', []],
    ['a picture between two words', '<p>Logo<img alt="" src="data:," width="10" height="10">Meridian</p>', []],
    ['a doubled space (no-break space and space)', '<p>Two&nbsp; spaces</p>', ['double-space']],
    ['spaces kept in code', '<pre>a  b ,c</pre><p>Run <code>x  ..y</code> now.</p>', []],
    ['a doubled full stop', '<p>It is done..</p>', ['double-punctuation']],
    ['an ellipsis, a path, a domain, a time and an address', '<p>Wait... see ../docs, example.com at 10:30, ::1 or .eml files.</p>', []],
    ['a doubled comma', '<p>One,, two</p>', ['double-punctuation']],
    ['a space before a comma', '<p>Hello , world</p>', ['double-punctuation']],
    ['a space before a full stop', '<p>The end .</p>', ['double-punctuation']],
    ['a question mark and a full stop', '<p>Deleted “Why now?”. Deleted Why now?.</p>', ['double-punctuation']],
    ['a link with no name', '<p><a href="/x"></a></p>', ['empty-name']],
    [
      'a link around a picture without alternative text',
      '<p><a href="/x"><img alt="" src="data:," width="10" height="10"></a></p>',
      ['empty-name'],
    ],
    [
      'an icon button without a label',
      '<button type="button"><svg aria-hidden="true" width="10" height="10"></svg></button>',
      ['empty-name'],
    ],
    [
      'named icon links and buttons',
      '<a href="/x"><img alt="Home" src="data:," width="10" height="10"></a><button aria-label="Close"><svg width="10" height="10"></svg></button><button aria-labelledby="l"></button><span id="l">Save</span><a href="/y" title="Search"></a>',
      [],
    ],
    [
      'a link out of reach of assistive technology',
      '<a href="/x" tabindex="-1" aria-hidden="true"><img alt="" src="data:,"></a><button hidden></button>',
      [],
    ],
  ];

  test('flags each kind of problem, and reads the right cases as right', async ({ page }) => {
    for (const [name, html, rules] of cases) {
      await page.setContent(`<!doctype html><html lang="en"><body>${html}</body></html>`);
      const findings = await readPage(page);
      expect
        .soft(
          findings.map((f) => f.rule),
          `${name}:\n${formatCopyFindings(findings)}`,
        )
        .toEqual(rules);
    }
  });

  test('says where: the element and the text around the glue', async ({ page }) => {
    await page.setContent(
      '<section class="cookie-banner"><p>No advertising or third-party trackers.<a href="/cookies">Cookie Policy</a></p></section>',
    );
    expect(await readPage(page)).toEqual([
      {
        rule: 'glued',
        element: 'body > section.cookie-banner > p > a[href="/cookies"]',
        text: 'No advertising or third-party trackers.|Cookie Policy',
      },
    ]);
  });
});

test('reader pages read right on a desktop and a phone, in both themes', async ({ page, request, site }) => {
  test.setTimeout(240_000);
  await signIn(request);
  const token = uniqueToken('copy');
  const article = await createFullArticle(request, token);

  // The cookie banner stays open: it is on every page for a first-time reader.
  await page.goto('/section/world');
  const navigation = await page
    .getByRole('navigation', { name: 'Main' })
    .getByRole('link')
    .evaluateAll((links) => links.map((a) => a.getAttribute('href')!));
  const footer = await page
    .locator('footer nav')
    .getByRole('link')
    .evaluateAll((links) => links.map((a) => a.getAttribute('href')!));
  expect(footer).toEqual(expect.arrayContaining(STATIC_PAGES));
  const demoArticle = await findUncommentedArticle(request);
  const noResults = '/search?q=zzqxnomatchword';
  // What a page must show before it is read, where it depends on data.
  const shows: Record<string, () => Promise<void>> = {
    [`/article/${article.slug}`]: async () => {
      await expect(page.getByTestId('comment')).toHaveCount(2);
      await expect(page.getByTestId('article-corrections')).toBeVisible();
    },
    [`/article/${demoArticle.slug}`]: () => expect(page.getByText('No comments yet.', { exact: false })).toBeVisible(),
    [`/search?q=${token}`]: () => expect(page.getByRole('list', { name: 'Search results' })).toBeVisible(),
    // A word in no bundle merges every one the worker's site holds, old years included (other specs write them);
    // a failure names what the results area showed instead.
    [noResults]: () =>
      expect(page.locator('.search-results')).toContainText('No articles found matching zzqxnomatchword', { timeout: 45_000 }),
    '/corrections': () => expect(page.getByText(article.title)).toBeVisible(),
  };
  const pages = new Set([
    // Every section and page the header and the footer link to (new ones are read as they are added).
    ...navigation,
    ...footer,
    ...STATIC_PAGES,
    ...Object.keys(shows),
    '/login',
    '/no-such-page',
    `/article/no-such-article-${token}`,
  ]);
  // The new article's pages and its search bundle are written before they are read: no bundle is swapped mid-search.
  await expect.poll(() => siteIsIdle(site.url), { timeout: 60_000 }).toBe(true);
  for (const url of pages) {
    await page.goto(url);
    await settle(page);
    await shows[url]?.();
    await expectReadsRightInEveryView(page, url);
  }
});

test('the back office reads right on a desktop and a phone, in both themes', async ({ page }) => {
  test.setTimeout(240_000);
  await signInPage(page);
  const token = uniqueToken('copy');
  const article = await createFullArticle(page.request, token);
  // An edit (a third revision, after the creation and the correction), a hidden comment, and an article in the trash.
  expect(
    (await page.request.put(`/api/articles/${article.id}`, { data: { dek: 'The port brings back its night pilots.' } })).status(),
  ).toBe(200);
  const [comment] = (await (await page.request.get(`/api/articles/${article.id}/comments`)).json()) as { id: string }[];
  expect((await page.request.put(`/api/comments/${comment!.id}/status`, { data: { status: 'hidden' } })).status()).toBe(200);
  const withdrawn = await createArticle(page.request, { title: `Withdrawn ${token} story`, status: 'published' });
  expect((await page.request.delete(`/api/articles/${withdrawn.id}`)).status()).toBe(204);

  await page.goto('/admin');
  await settle(page);
  // Every tab the admin has, so the tabs other issues add are read as they land.
  const tabs = await page.getByRole('tablist', { name: 'Dashboard sections' }).getByRole('tab').allInnerTexts();
  expect(tabs).toEqual(
    expect.arrayContaining(['Overview', 'Article Manager', 'Comments', 'News Sources', 'Subscribers', 'Trash', 'Users', 'Audit']),
  );
  for (const name of tabs) {
    await page.getByRole('tab', { name, exact: true }).click();
    await expect(page.getByRole('tab', { name, exact: true })).toHaveAttribute('aria-selected', 'true');
    await settle(page);
    await expectReadsRightInEveryView(page, `the dashboard's ${name} tab`);
    if (name === 'Subscribers') {
      await page.getByRole('button', { name: 'Preview briefing' }).click();
      await expect(page.getByTestId('briefing-preview')).toBeVisible();
      await expectReadsRightInEveryView(page, "the dashboard's Subscribers tab with the briefing preview");
    }
    if (name === 'Users') {
      await page.getByLabel('Username').fill(`copy.${token}`);
      await page.getByRole('button', { name: 'Add User' }).click();
      await expect(page.getByTestId('generated-password')).toBeVisible();
      await expectReadsRightInEveryView(page, "the dashboard's Users tab with a new user's password");
    }
  }

  await page.goto('/admin/editor');
  await settle(page);
  await expectReadsRightInEveryView(page, 'the editor, new article');
  await page.goto(`/admin/editor/${article.id}`);
  await settle(page);
  // Created, corrected, edited: the first revision is compared with the current text.
  await expect(page.getByTestId('revision')).toHaveCount(3);
  await page.getByTestId('revision').last().getByRole('button', { name: 'View' }).click();
  await expect(page.getByTestId('revision-detail')).toBeVisible();
  await settle(page);
  await expectReadsRightInEveryView(page, 'the editor, an article with its history and a revision open');
  // An article as staff see it: moderation buttons on the comments.
  await page.goto(`/article/${article.slug}`);
  await settle(page);
  await expect(page.getByTestId('comment')).toHaveCount(2);
  await expectReadsRightInEveryView(page, 'an article, signed in');
});

/** A link a mail carries: made from the site's SITE_URL, and followed where the site listens. */
function mailLink(site: Site, text: string, pattern: RegExp): string {
  const link = pattern.exec(text)?.[0];
  expect(link, `the mail has its link (${pattern.source})`).toBeTruthy();
  expect(link!.startsWith(`${site.siteUrl}/`), link).toBe(true);
  const { pathname, search } = new URL(link!);
  return new URL(pathname + search, site.url).href;
}

/** Runs `npm run briefing -- --force` against the e2e site (it asks the running server to send). */
async function sendBriefing(site: Site): Promise<void> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: site.dataDir, SITE_URL: site.siteUrl };
  delete env.DATABASE_URL;
  if (site.databaseUrl) env.DATABASE_URL = site.databaseUrl;
  await promisify(execFile)(process.execPath, ['scripts/briefing.ts', '--force'], { env });
}

test('the mails and the newsletter pages read right', async ({ page, request, site }) => {
  test.setTimeout(120_000);
  await declineCookies(page);
  const address = `${uniqueToken('copy')}@example.com`;

  // Sign-up from the footer, as a reader does: the form's answer, then the confirmation mail.
  await page.goto('/about');
  await settle(page);
  await page.getByLabel('Email address').fill(address);
  await page.getByRole('button', { name: 'Subscribe' }).click();
  await expect(page.getByTestId('newsletter-check-inbox')).toContainText(address);
  await expect(page.getByTestId('toast')).toBeVisible();
  await expectReadsRightInEveryView(page, 'the sign-up form and its toast');
  await expect.poll(async () => (await readOutbox(site, address)).length).toBe(1);
  const confirmation = (await readOutbox(site, address)).find((mail) => mail.subject.startsWith('Confirm'));
  await expectMailReadsRight(page, confirmation!, 'the confirmation mail');

  const confirmUrl = mailLink(site, confirmation!.text, /https?:\/\/\S+\/newsletter\/confirm\?token=\w+/);
  await visit(page, confirmUrl, 'the confirmation page (confirmed)');
  await expect(page.getByTestId('confirm-result')).toHaveAttribute('data-outcome', 'confirmed');
  await visit(page, confirmUrl, 'the confirmation page (used link)');
  await expect(page.getByTestId('confirm-result')).toHaveAttribute('data-outcome', 'unknown');
  await visit(page, '/newsletter/confirm', 'the confirmation page (incomplete link)');

  // The briefing as a subscriber gets it, with an article sure to be in it.
  await signIn(request);
  await createArticle(request, {
    title: `Briefing lead ${uniqueToken('b')}`,
    dek: 'What the day holds.',
    status: 'published',
    isEditorsPick: true,
  });
  await sendBriefing(site);
  await expect.poll(async () => (await readOutbox(site, address)).length).toBe(2);
  const briefing = (await readOutbox(site, address)).find((mail) => mail.subject.includes('briefing'));
  expect(briefing?.subject).toMatch(/briefing/);
  await expectMailReadsRight(page, briefing!, 'the briefing mail');

  const unsubscribeUrl = mailLink(site, briefing!.text, /https?:\/\/\S+\/newsletter\/unsubscribe\?token=\w+/);
  await visit(page, unsubscribeUrl, 'the unsubscribe page (unsubscribed)');
  await expect(page.getByTestId('unsubscribe-result')).toHaveAttribute('data-outcome', 'done');
  await visit(page, `/newsletter/unsubscribe?token=${'c'.repeat(32)}`, 'the unsubscribe page (unknown link)');
  await visit(page, '/newsletter/unsubscribe', 'the unsubscribe page (incomplete link)');
});

test('the members’ mails and account pages read right', async ({ page, site }) => {
  test.setTimeout(120_000);
  await declineCookies(page);
  const address = `${uniqueToken('member')}@example.com`;

  // Sign-up as a reader does it: the form and its answer, the link mail for a new address, the account page, the welcome mail.
  await visit(page, '/account/sign-in', 'the sign-in page');
  await visit(page, '/account/sign-in?error=expired', 'the sign-in page (a spent link)');
  await page.getByLabel('Email', { exact: true }).fill(address);
  await page.getByLabel(/^Name/).fill('Copy Reader');
  await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
  await expect(page.getByTestId('sign-in-sent')).toContainText(address);
  await expectReadsRightInEveryView(page, 'the sign-in form and its answer');
  await expect.poll(async () => (await readOutbox(site, address)).length).toBe(1);
  const [signUp] = await readOutbox(site, address);
  await expectMailReadsRight(page, signUp!, 'the sign-in mail of a new address');

  await visit(page, mailLink(site, signUp!.text, /https?:\/\/\S+\/api\/members\/confirm\?token=\w+/), 'the account page');
  await expect(page.getByTestId('member-account')).toBeVisible();
  await page.getByTestId('account-delete').click();
  await expectReadsRightInEveryView(page, 'the account page, asking before it deletes');
  await expect.poll(async () => (await readOutbox(site, address)).length).toBe(2);
  const welcome = (await readOutbox(site, address)).find((mail) => mail.subject.startsWith('Welcome'));
  await expectMailReadsRight(page, welcome!, 'the welcome mail');

  // A known address asks again: the sign-in copy.
  const answer = await page.request.post('/api/members/sign-in', { data: { email: address } });
  expect(answer.status()).toBe(200);
  await expect.poll(async () => (await readOutbox(site, address)).length).toBe(3);
  const signIn = (await readOutbox(site, address)).at(-1);
  expect(signIn?.subject).toMatch(/sign-in link/);
  await expectMailReadsRight(page, signIn!, 'the sign-in mail of a known address');
});
