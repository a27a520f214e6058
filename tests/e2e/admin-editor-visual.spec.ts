/**
 * The body's visual view (issue 34): formatting writes the expected HTML, views switch without changing a byte,
 * real Google Docs and Word clipboards paste to clean structure, an inline image reaches the published page with
 * its srcset and alt, nothing unsafe typed or pasted reaches readers, and the editor is usable by keyboard.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Page, Request } from '@playwright/test';
import { expectNoSeriousViolations } from './axe.ts';
import { expect, test } from './fixtures.ts';
import { createArticle, expectToast, getArticle, gotoAdmin, signInPage, uniqueToken } from './admin-helpers.ts';
import { sanitizeBodyHtml } from '../../src/server/html.ts';
/** The sentence a locked block shows (src/islands/editor/visual-body.ts). */
const LOCKED_SENTENCE = "This part can't be shown in the visual view. Edit it in HTML.";

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures');

/** One of every element the sanitiser allows, as the server stores it. */
const EVERY_ELEMENT = [
  '<p>Plain, <strong>bold</strong>, <em>italic</em>, <code>code</code>,<br>a break and <a href="https://example.com/a" title="Example">a link</a>.</p>',
  '<h2>Two</h2><h3>Three</h3><h4>Four</h4>',
  '<ul><li>one</li><li>two<ul><li>nested</li></ul></li></ul>',
  '<ol><li>first</li><li><p>second</p><p>more</p></li></ol>',
  '<blockquote><p>Quoted.</p></blockquote>',
  '<figure><img src="/images/0123456789abcdef/1200.webp" alt="A harbour" width="1200" height="675"><figcaption>The harbour</figcaption></figure>',
  '<pre><code>const a = 1;\n  indented();</code></pre>',
  '<hr>',
  '<p>Local <a href="/section/world">link</a> and <a href="mailto:desk@example.com">mail</a>.</p>',
  // An image outside a figure: the visual view cannot show it and keeps it as a locked block.
  '<p>An inline <img src="https://cdn.example.com/pic.jpg" alt="pic"> picture.</p>',
].join('');

function isArticleWrite(req: Request): boolean {
  const { pathname } = new URL(req.url());
  return (req.method() === 'POST' && pathname === '/api/articles') || (req.method() === 'PUT' && pathname.startsWith('/api/articles/'));
}

const bodyTextarea = (page: Page) => page.getByLabel('Article Body (HTML)');
const visual = (page: Page) => page.getByTestId('visual-editor');

async function openVisual(page: Page): Promise<void> {
  await page.getByRole('tab', { name: 'Visual' }).click();
  await expect(visual(page)).toBeVisible();
}

async function bodyHtml(page: Page): Promise<string> {
  await page.getByRole('tab', { name: 'HTML' }).click();
  const value = await bodyTextarea(page).inputValue();
  await openVisual(page);
  return value;
}

/** A paste event carrying the given clipboard data, as the browser sends it. */
async function paste(page: Page, data: Record<string, string>): Promise<void> {
  await visual(page).evaluate((element, items) => {
    const transfer = new DataTransfer();
    for (const [type, value] of Object.entries(items)) transfer.setData(type, value);
    element.dispatchEvent(new ClipboardEvent('paste', { clipboardData: transfer, bubbles: true, cancelable: true }));
  }, data);
}

/** What readers would get, as a canonical DOM text: the sanitiser's output, whitespace-only text dropped, attributes sorted. */
async function renderedForm(page: Page, html: string): Promise<string> {
  return page.evaluate((sanitised) => {
    const template = document.createElement('template');
    template.innerHTML = sanitised;
    const walk = (node: Node): string => {
      if (node.nodeType === Node.TEXT_NODE) return (node.textContent ?? '').trim() ? (node.textContent ?? '') : '';
      if (!(node instanceof Element)) return '';
      // A list item's single paragraph renders as the item's text.
      const children = [...node.childNodes].filter((child) => child.nodeType !== Node.TEXT_NODE || (child.textContent ?? '').trim());
      const inner =
        node.tagName === 'LI' && children.length === 1 && children[0] instanceof HTMLParagraphElement
          ? [...children[0].childNodes].map(walk).join('')
          : [...node.childNodes].map(walk).join('');
      const attributes = [...node.attributes].map((a) => `${a.name}="${a.value}"`).sort();
      return `<${node.tagName.toLowerCase()}${attributes.map((a) => ` ${a}`).join('')}>${inner}</${node.tagName.toLowerCase()}>`;
    };
    return [...template.content.childNodes].map(walk).join('');
  }, sanitizeBodyHtml(html));
}

test.beforeEach(async ({ page }) => {
  await signInPage(page);
});

test('switching views changes no byte and saves nothing; an edit renders the same but for the edit; locked HTML is kept', async ({
  page,
}) => {
  const article = await createArticle(page.request, { title: `Round trip ${uniqueToken('rt')}`, bodyHtml: EVERY_ELEMENT });
  const stored = article.bodyHtml;
  let writes = 0;
  page.on('request', (req) => {
    if (isArticleWrite(req)) writes++;
  });
  const cspErrors: string[] = [];
  page.on('console', (message) => {
    if (/Content.Security.Policy/i.test(message.text())) cspErrors.push(message.text());
  });
  await gotoAdmin(page, `/admin/editor/${article.id}`);
  await expect(bodyTextarea(page)).toHaveValue(stored);

  await openVisual(page);
  await expect(visual(page).locator('h2')).toHaveText('Two');
  await expect(visual(page).locator('figure img')).toHaveAttribute('alt', 'A harbour');
  const locked = page.getByTestId('locked-html');
  await expect(locked).toHaveCount(1);
  await expect(locked).toContainText(LOCKED_SENTENCE);
  await expect(locked).toContainText('<img src="https://cdn.example.com/pic.jpg" alt="pic">');
  await expect(page.getByTestId('body-stats')).toHaveText(/^\d+ words · 1 min read$/);

  // Back and forth without an edit: the same bytes, and (past the autosave delay) no save at all.
  expect(await bodyHtml(page)).toBe(stored);
  await page.getByRole('tab', { name: 'HTML' }).click();
  await expect(bodyTextarea(page)).toHaveValue(stored);
  // Nothing is scheduled to show: what proves no autosave is the editor's delay (AUTOSAVE_DELAY_MS, 2.5 s) passing without one.
  await page.waitForTimeout(3_000);
  expect(writes).toBe(0);

  // An edit in the visual view: the sanitised result renders as the original plus the words typed.
  await openVisual(page);
  await visual(page).locator('h3').click();
  await page.keyboard.press('End');
  await page.keyboard.type(' edited');
  const edited = await bodyHtml(page);
  expect(edited).toContain('<h3>Three edited</h3>');
  expect(edited).toContain('<p>An inline <img src="https://cdn.example.com/pic.jpg" alt="pic"> picture.</p>');
  expect(await renderedForm(page, edited)).toBe(await renderedForm(page, stored.replace('<h3>Three</h3>', '<h3>Three edited</h3>')));

  // The edit autosaves as any edit does, and the server stores its own sanitised copy.
  await expect(page.getByTestId('autosave-status')).toContainText('Saved automatically', { timeout: 10_000 });
  const autosaved = await getArticle(page.request, article.id);
  expect(autosaved.bodyHtml).toBe(sanitizeBodyHtml(edited));

  // Someone else saves; the next autosave from the visual view meets the 409, and Reload shows their text in the view.
  const theirs = await page.request.put(`/api/articles/${article.id}`, {
    data: { bodyHtml: '<p>Their text.</p>', version: autosaved.version },
  });
  expect(theirs.status()).toBe(200);
  await visual(page).locator('h2').click();
  await page.keyboard.press('End');
  await page.keyboard.type(' again');
  await page.getByRole('textbox', { name: 'Title', exact: true }).click();
  const banner = page.getByTestId('editor-conflict');
  await expect(banner).toBeVisible({ timeout: 10_000 });
  await banner.getByRole('button', { name: 'Reload their version' }).click();
  await expect(visual(page)).toHaveText('Their text.');
  expect(await bodyHtml(page)).toBe('<p>Their text.</p>');
  expect(cspErrors).toEqual([]);
});

test('typing with the toolbar and the shortcuts writes the expected HTML; links are checked; undo and redo', async ({ page }) => {
  await gotoAdmin(page, '/admin/editor');
  await openVisual(page);
  await visual(page).click();
  const keys = page.keyboard;
  await keys.type('Hello ');
  await keys.press('Control+b');
  await keys.type('bold');
  await keys.press('Control+b');
  await keys.type(' and ');
  await keys.press('Control+i');
  await keys.type('italic');
  await keys.press('Control+i');
  await keys.press('Enter');
  await page.getByRole('button', { name: 'Heading 2' }).click();
  await keys.type('Section');
  await keys.press('Enter');
  await page.getByRole('button', { name: 'Bulleted list' }).click();
  await keys.type('one');
  await keys.press('Enter');
  await keys.type('two');
  await keys.press('Enter');
  await keys.press('Enter');
  await keys.press('Control+Shift+b');
  await keys.type('Quoted');
  await keys.press('Enter');
  await keys.press('Enter');
  await keys.press('Control+Shift+7');
  await keys.type('first');
  await expect(page.getByRole('button', { name: 'Numbered list' })).toHaveAttribute('aria-pressed', 'true');
  expect(await bodyHtml(page)).toBe(
    '<p>Hello <strong>bold</strong> and <em>italic</em></p><h2>Section</h2><ul><li>one</li><li>two</li></ul><blockquote><p>Quoted</p></blockquote><ol><li>first</li></ol>',
  );

  // A link on the word "Section": a javascript: address is refused in the dialog, an https one applied.
  await visual(page).locator('h2').click();
  await keys.press('End');
  await keys.press('Shift+Home');
  await keys.press('Control+k');
  const dialog = page.getByTestId('link-dialog');
  await expect(dialog).toBeVisible();
  const address = dialog.getByLabel('Link address');
  await expect(address).toBeFocused();
  await address.fill('javascript:alert(1)');
  await address.press('Enter');
  await expect(dialog.getByRole('alert')).toContainText('Use a web address');
  await expect(address).toHaveAttribute('aria-invalid', 'true');
  await address.fill('https://example.com/story');
  await dialog.getByRole('button', { name: 'Apply' }).click();
  await expect(dialog).toHaveCount(0);

  // Undo takes the link away again, redo brings it back (the history lives in the view while it is open).
  const link = visual(page).locator('h2 a');
  await expect(link).toHaveCount(1);
  await page.getByRole('button', { name: 'Undo' }).click();
  await expect(link).toHaveCount(0);
  await expect(visual(page).locator('h2')).toHaveText('Section');
  await page.keyboard.press('Control+Shift+z');
  await expect(link).toHaveAttribute('href', 'https://example.com/story');
  expect(await bodyHtml(page)).toContain('<h2><a href="https://example.com/story">Section</a></h2>');
  await expect(page.getByTestId('body-stats')).toHaveText('9 words · 1 min read');
});

test('Google Docs and Word clipboards paste to clean structure; embeds become locked blocks; scripts never land', async ({ page }) => {
  const cases = [
    {
      file: 'google-docs-headings.html',
      expect: [
        /<h2>Heading 1<\/h2>/,
        /<h2>Heading 2<\/h2>/,
        /<h3>Heading 3<\/h3>/,
        /<p>Some text\.<\/p>/,
        /in the middle\.\s?<br>\s?But with a line break\./,
      ],
    },
    {
      file: 'google-docs-inline.html',
      expect: [
        /<p>This is a test of inline formatting\.<\/p>/,
        /<strong>\s?is bold\s?<em>\s?and italic\s?<\/em><\/strong><em>\s?or just italic\s?<\/em>/,
        /<a href="https:\/\/github\.com\/">linked \(to GitHub\)\s?<\/a>/,
      ],
    },
    {
      file: 'word-desktop-lists.html',
      // Upstream masked the text, whitespace between tags included, as ■: that masked whitespace shows as short items.
      expect: [/<ol>(<li>■{1,3}<\/li>)?<li><strong>■+<\/strong>■+<\/li>/, /<p><em>■+<\/em><\/p>/],
    },
  ];
  for (const { file, expect: patterns } of cases) {
    await gotoAdmin(page, '/admin/editor');
    await openVisual(page);
    await visual(page).click();
    await paste(page, { 'text/html': fs.readFileSync(path.join(FIXTURES, 'paste', file), 'utf8'), 'text/plain': 'plain' });
    const html = await bodyHtml(page);
    for (const pattern of patterns) expect(html, file).toMatch(pattern);
    expect(html, file).not.toMatch(/style=|class=|<span|<script|<o:p|<meta|<b\b|<i\b|docs-internal|mso-|<!--|dir=/);
  }

  await gotoAdmin(page, '/admin/editor');
  await openVisual(page);
  await visual(page).click();
  const embed = '<iframe width="560" height="315" src="https://www.youtube.com/embed/abc" allowfullscreen></iframe>';
  await paste(page, { 'text/plain': embed });
  await expect(page.getByTestId('locked-html')).toContainText(LOCKED_SENTENCE);
  await paste(page, {
    'text/html': '<p>Safe <a href="javascript:alert(1)">words</a></p><script>alert(2)</script><img src="x" onerror="alert(3)">',
  });
  const html = await bodyHtml(page);
  expect(html).toContain(embed);
  expect(html).toContain('<p>Safe words</p>');
  expect(html).not.toMatch(/<script|onerror|javascript:/);
});

test(
  'an inline image is uploaded with alt text and caption and published with its srcset; unsafe HTML never reaches the page',
  { tag: '@store' },
  async ({ page }) => {
    const token = uniqueToken('inline');
    await gotoAdmin(page, '/admin/editor');
    await page.getByLabel('Title').fill(`Inline image ${token}`);
    await bodyTextarea(page).fill(
      '<p>Intro</p><script>alert("typed")</script><p><a href="javascript:alert(1)">bad link</a></p><img src="/nothing.png" onerror="alert(2)"><p onclick="alert(3)">Closing</p>',
    );
    await openVisual(page);
    await expect(page.getByTestId('locked-html')).toHaveCount(3);
    await visual(page).locator('p', { hasText: 'Intro' }).click();
    await page.keyboard.press('End');
    await page.getByRole('button', { name: 'Image', exact: true }).click();
    const dialog = page.getByTestId('image-dialog');
    await dialog.getByTestId('inline-image-file').setInputFiles(path.join(FIXTURES, 'upgrade-0.1.0/harbour.jpg'));
    await dialog.getByRole('button', { name: 'Insert image' }).click();
    await expect(dialog.getByRole('alert')).toContainText('alt text');
    await dialog.getByLabel('Alt text').fill('Boats in the harbour at dawn');
    await dialog.getByLabel('Caption').fill('The harbour this morning');
    await dialog.getByRole('button', { name: 'Insert image' }).click();
    await expect(dialog).toHaveCount(0);
    await expect(visual(page).locator('figure img')).toHaveAttribute('alt', 'Boats in the harbour at dawn');
    // Typing on goes after the figure, never over it (the text has the focus back as the figure shows).
    await expect(visual(page)).toBeFocused();
    await page.keyboard.type('After the picture.');
    await expect(visual(page).locator('figure + p')).toHaveText('After the picture.');

    const [request] = await Promise.all([
      page.waitForRequest(isArticleWrite),
      page.getByRole('button', { name: 'Publish Now', exact: true }).click(),
    ]);
    await request.response();
    await expectToast(page, 'Article created');
    const id = new URL(page.url()).pathname.split('/').pop()!;
    const article = await getArticle(page.request, id);
    expect(article.bodyHtml).toMatch(/<figure><img src="\/images\/[a-f0-9]+\/1200\.webp" alt="Boats in the harbour at dawn"/);

    // The worker renders the page a moment after the publish.
    await expect.poll(async () => (await page.request.get(`/article/${article.slug}`)).status(), { timeout: 20_000 }).toBe(200);
    await page.goto(`/article/${article.slug}`);
    const body = page.locator('.article-body');
    const image = body.locator('figure img');
    await expect(image).toHaveAttribute('alt', 'Boats in the harbour at dawn');
    await expect(image).toHaveAttribute(
      'srcset',
      /\/images\/[a-f0-9]+\/400\.webp 400w, \/images\/[a-f0-9]+\/800\.webp 800w, \/images\/[a-f0-9]+\/1200\.webp 1200w/,
    );
    await expect(image).toHaveAttribute('sizes', /100vw/);
    await expect(body.locator('figcaption')).toHaveText('The harbour this morning');
    await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBeGreaterThan(0);
    const published = await body.innerHTML();
    expect(published).toContain('Closing');
    expect(published).toMatch(/<\/figure><p>After the picture\.<\/p>/);
    expect(published).not.toMatch(/<script|onerror|onclick|javascript:|alert\(/i);
  },
);

for (const theme of ['light', 'dark'] as const) {
  test(`keyboard only, axe clean and 375 px wide (${theme} theme)`, async ({ page }) => {
    // axe on the whole editor page takes a while on a busy machine.
    test.setTimeout(90_000);
    await page.addInitScript((value) => localStorage.setItem('meridian-theme', value), theme);
    await page.setViewportSize({ width: 375, height: 800 });
    await gotoAdmin(page, '/admin/editor');
    const htmlTab = page.getByRole('tab', { name: 'HTML' });
    await expect(htmlTab).toHaveAttribute('aria-selected', 'true');
    await page.getByLabel('Author Name').focus();
    await page.keyboard.press('Tab');
    await expect(htmlTab).toBeFocused();
    await page.keyboard.press('ArrowLeft');
    const visualTab = page.getByRole('tab', { name: 'Visual' });
    await expect(visualTab).toBeFocused();
    await expect(visualTab).toHaveAttribute('aria-selected', 'true');
    await expect(visual(page)).toBeVisible();

    // Tab reaches the toolbar (one stop), arrows move along it, the focus ring shows, and Tab goes on into the text.
    // The toolbar comes with the view's lazily loaded code, and its tools are disabled until the editor
    // is made (an effect after the first paint): a Tab before that goes past them.
    const first = page.getByRole('button', { name: 'Heading 2' });
    await expect(first).toBeEnabled();
    await page.keyboard.press('Tab');
    await expect(first).toBeFocused();
    expect(await first.evaluate((el) => getComputedStyle(el).outlineStyle)).not.toBe('none');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await expect(page.getByRole('button', { name: 'Bold' })).toBeFocused();
    await page.keyboard.press('Tab');
    await expect(visual(page)).toBeFocused();
    await page.keyboard.type('Typed by keyboard.');
    await expect(visual(page)).toHaveText('Typed by keyboard.');

    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(375);

    // The preview is a sandboxed frame where no script may run, and axe waits for its frame script there: it is left out.
    await page.locator('iframe[title="Article body preview"]').evaluate((frame) => frame.remove());
    await expectNoSeriousViolations(page);
  });
}
