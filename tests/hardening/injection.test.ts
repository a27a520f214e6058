/**
 * Injection (issue 8): XSS payloads (OWASP filter-evasion samples and our own) sent through every
 * field a reader or editor controls, and through a feed, never run in Chromium on any reader page or
 * admin screen. The browser ignores the CSP here (bypassCSP), so the escaping and sanitising are what
 * is tested, not the policy that would hide their failure. Path traversal in image paths, slugs and
 * static paths is refused.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFeedServer, type FeedServer } from '../fixtures/feeds/feed-server.ts';
import {
  TestClient,
  adminClient,
  createArticle,
  freshIp,
  launchChromium,
  openSocket,
  pageSettled,
  readUntilClosed,
  startHardenedServer,
  trackRequests,
  waitForFile,
  waitForIdleQueue,
  type TestServer,
} from './support.ts';

/**
 * Each payload calls __xss(n) when it runs. From the OWASP XSS filter evasion cheat sheet, adapted
 * to call the probe, and payloads aimed at this stack (island props, JSON-LD, srcdoc, attributes).
 */
const PAYLOADS = [
  '<script>__xss(1)</script>',
  '<IMG SRC=x onerror="__xss(2)">',
  '<svg/onload=__xss(3)>',
  '"><script>__xss(4)</script>',
  "'><img src=x onerror=__xss(5)>",
  '</script><script>__xss(6)</script>',
  '<IMG SRC="jav&#x09;ascript:__xss(7);">',
  '<a href="javascript:__xss(8)">click</a>',
  '<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;__xss(9)">x</a>',
  '<<SCRIPT>__xss(10);//<</SCRIPT>',
  '<IMG """><SCRIPT>__xss(11)</SCRIPT>">',
  '<BODY ONLOAD=__xss(12)>',
  '<iframe srcdoc="<script>parent.__xss(13)</script>"></iframe>',
  '<details open ontoggle=__xss(14)>',
  '<math><mtext><table><mglyph><style><img src=x onerror=__xss(15)>',
  '<svg><animate onbegin=__xss(16) attributeName=x dur=1s>',
  '<input autofocus onfocus=__xss(17)>',
  '<object data="javascript:__xss(18)"></object>',
  '<scr<script>ipt>__xss(19)</scr</script>ipt>',
  '<META HTTP-EQUIV="refresh" CONTENT="0;url=javascript:__xss(20);">',
  "<STYLE>@import'javascript:__xss(21)';</STYLE>",
  '<img src=`x`onerror=__xss(22)>',
  '\u003cimg src=x onerror=__xss(23)\u003e',
  '<noscript><p title="</noscript><img src=x onerror=__xss(24)>">',
  "{{constructor.constructor('__xss(25)')()}}",
  '<form><button formaction=javascript:__xss(26)>x</button></form>',
  '<video><source onerror="__xss(27)">',
  '<a href="data:text/html;base64,PHNjcmlwdD5wYXJlbnQuX194c3MoMjgpPC9zY3JpcHQ+">x</a>',
  '<div style="background:url(javascript:__xss(29))">',
  '<img src=x:x onerror=__xss(30)//',
];
const ALL = PAYLOADS.join(' ');

let server: TestServer;
let feeds: FeedServer;
let browser: Browser;
let admin: TestClient;
const articles: { id: string; slug: string }[] = [];

beforeAll(async () => {
  [server, feeds, browser] = await Promise.all([startHardenedServer(), startFeedServer(), launchChromium()]);
  admin = await adminClient(server);
  // Every editor field at once, and one payload per field on its own (so a sanitiser cannot hide behind another field's failure).
  articles.push(
    await createArticle(admin, {
      title: `Payloads ${PAYLOADS.slice(0, 8).join(' ')}`.slice(0, 300),
      dek: ALL.slice(0, 1000),
      bodyHtml: `<p>Body</p>${ALL}<p><a href="javascript:__xss(99)">link</a></p>`,
      tags: PAYLOADS.map((p) => p.slice(0, 50)).slice(0, 30),
      authorName: '<img src=x onerror=__xss(40)>'.slice(0, 100),
      sourceLabel: '<svg/onload=__xss(41)>',
      sourceUrl: 'https://example.com/?q="><script>__xss(42)</script>',
      heroImage: 'https://example.com/x.jpg?"onerror="__xss(43)',
      section: 'world',
      status: 'published',
      isBreaking: true,
      isEditorsPick: true,
    }),
  );
  for (const [i, payload] of PAYLOADS.slice(0, 10).entries()) {
    articles.push(
      await createArticle(admin, {
        title: payload,
        authorName: payload.slice(0, 100),
        dek: payload,
        tags: [payload.slice(0, 50)],
        section: i % 2 ? 'world' : 'home',
        status: 'published',
        bodyHtml: `<p>${payload}</p>`,
      }),
    );
  }
  // Readers' comments on the first article: name and content.
  for (const payload of PAYLOADS.slice(0, 4)) {
    const response = await new TestClient(server.url, freshIp()).post(`/api/articles/${articles[0]!.id}/comments`, {
      authorName: payload.slice(0, 100),
      authorEmail: 'x@example.com',
      content: ALL.slice(0, 5000),
    });
    expect(response.status).toBe(201);
  }
  // A news source with a payload name, whose feed carries payloads in every item field.
  feeds.route('/feeds/payloads.xml', (_req, res) => {
    const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    res.writeHead(200, { 'Content-Type': 'application/rss+xml' });
    res.end(`<?xml version="1.0"?><rss version="2.0"><channel><title>${escape(ALL)}</title><link>${feeds.url}/</link>
      <item><title>${escape(PAYLOADS.slice(0, 5).join(' '))}</title><link>${feeds.url}/story/1</link>
        <description><![CDATA[<p>Feed body</p>${ALL.replace(/]]>/g, '')}]]></description>
        <author>${escape(PAYLOADS[2]!)}</author><category>${escape(PAYLOADS[1]!)}</category></item></channel></rss>`);
  });
  const source = await admin.post('/api/news-sources', {
    name: '<img src=x onerror=__xss(50)>',
    url: `${feeds.url}/feeds/payloads.xml`,
    section: 'world',
  });
  expect(source.status).toBe(201);
  const fetched = await admin.post(`/api/news-sources/${((await source.json()) as { id: string }).id}/fetch`);
  expect(fetched.status, await fetched.clone().text()).toBe(200);
  await waitForIdleQueue(server.url);
  for (const { slug } of articles) await waitForFile(path.join(server.clientDir, 'article', slug, 'index.html'));
});

afterAll(async () => {
  await browser?.close();
  await feeds?.close();
  await server?.stop();
});

/** The articles the payload feed brought in. */
async function feedArticles(): Promise<{ slug: string; bodyHtml: string; sourceLabel?: string }[]> {
  const list = (await (await admin.get('/api/articles?pageSize=100')).json()) as { slug: string; bodyHtml: string; sourceLabel?: string }[];
  return list.filter((a) => a.bodyHtml.includes('Feed body'));
}

/**
 * What ran and what is there: the probe's calls, plus markup that would run on a click or in
 * another browser (handlers, javascript: URLs, executable scripts carrying a payload).
 */
async function inspect(page: Page): Promise<{ fired: number[]; dangerous: string[] }> {
  return page.evaluate(() => {
    const dangerous: string[] = [];
    const all = [document, ...[...document.querySelectorAll('iframe')].flatMap((f) => (f.contentDocument ? [f.contentDocument] : []))];
    for (const doc of all) {
      for (const el of doc.querySelectorAll('*')) {
        for (const attr of el.getAttributeNames()) {
          const value = el.getAttribute(attr) ?? '';
          if (/^on/i.test(attr)) dangerous.push(`${el.tagName} ${attr}=${value.slice(0, 40)}`);
          if (
            /^(href|src|action|formaction|data|xlink:href)$/i.test(attr) &&
            /^\s*(javascript|vbscript|data:text\/html)/i.test(value.replace(/[\p{Cc} ]/gu, ''))
          )
            dangerous.push(`${el.tagName} ${attr}=${value.slice(0, 40)}`);
        }
        if (el.tagName === 'SCRIPT' && /__xss/.test(el.textContent ?? '') && !/json/i.test(el.getAttribute('type') ?? ''))
          dangerous.push(`executable script: ${(el.textContent ?? '').slice(0, 60)}`);
        if (
          el.tagName === 'IFRAME' &&
          el.hasAttribute('srcdoc') &&
          (el.getAttribute('sandbox') === null || /allow-scripts/.test(el.getAttribute('sandbox')!))
        )
          dangerous.push('iframe srcdoc without sandbox');
        if (/^(OBJECT|EMBED|BASE)$/.test(el.tagName)) dangerous.push(el.tagName);
        if (el.tagName === 'META' && /refresh/i.test(el.getAttribute('http-equiv') ?? '')) dangerous.push('meta refresh');
      }
    }
    return { fired: (window as unknown as { __xssFired: number[] }).__xssFired, dangerous };
  });
}

async function newPage(signedIn: boolean): Promise<Page> {
  // bypassCSP: the policy would stop injected inline scripts and hide an escaping bug.
  const context = await browser.newContext({ bypassCSP: true });
  await context.addInitScript(() => {
    const w = window as unknown as { __xssFired: number[]; __xss: (n: number) => void };
    w.__xssFired = [];
    w.__xss = (n: number) => w.__xssFired.push(n);
  });
  if (signedIn) await context.addCookies([{ name: 'session', value: admin.cookies.get('session')!, url: server.url }]);
  return trackRequests(await context.newPage(), server.url);
}

/** Visits a page, lets its islands hydrate (scrolling brings the lazy ones in), and answers what ran. */
async function visit(page: Page, pathname: string, act?: (page: Page) => Promise<void>) {
  const response = await page.goto(new URL(pathname, server.url).href, { waitUntil: 'load' });
  expect(response?.status(), pathname).toBeLessThan(500);
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  // Every island that will hydrate has: a client:visible one whose elements are all out of view (scrolled
  // past) or that has none (a banner already answered) never does, and must not stall the run.
  await page
    .waitForFunction(
      () =>
        [...document.querySelectorAll('astro-island[ssr]')].every(
          (island) =>
            island.getAttribute('client') === 'visible' &&
            [...island.children].every((child) => {
              const box = child.getBoundingClientRect();
              return child.getClientRects().length === 0 || box.bottom < 0 || box.top > innerHeight;
            }),
        ),
      undefined,
      { timeout: 1_000 },
    )
    .catch(() => {});
  if (act) await act(page);
  // Whatever the page loaded has arrived and run: a payload's image error or focus handler has fired.
  await pageSettled(page);
  return { pathname, ...(await inspect(page)) };
}

describe('XSS payloads never run', () => {
  it('on reader pages: articles (body, comments, byline, tags, JSON-LD), sections, the ticker, search and the 404 screen', async () => {
    const page = await newPage(false);
    const results = [];
    const feedArticle = (await feedArticles())[0];
    expect(feedArticle, 'the feed item was published').toBeDefined();
    const slugs = [...articles.map((a) => a.slug), feedArticle!.slug];
    for (const slug of slugs) {
      results.push(
        await visit(page, `/article/${slug}`, async (p) => {
          // The first article carries the readers' comments: wait until the island has rendered all four.
          if (slug === articles[0]!.slug) await p.getByTestId('comment').nth(3).waitFor({ timeout: 10_000 });
        }),
      );
    }
    for (const p of [
      '/section/world',
      '/section/home',
      `/section/${encodeURIComponent('<script>__xss(60)</script>')}`,
      `/article/${encodeURIComponent('"><img src=x onerror=__xss(61)>')}`,
    ])
      results.push(await visit(page, p));
    for (const q of ['<script>__xss(62)</script>', '"><img src=x onerror=__xss(63)>', 'Payloads', 'Body', 'javascript:__xss(64)']) {
      results.push(await visit(page, `/search?q=${encodeURIComponent(q)}`));
    }
    expect(results.filter((r) => r.fired.length || r.dangerous.length)).toEqual([]);
    await page.context().close();
  });

  it('on admin screens: the dashboard tabs, the comment list, the sources list and the editor', async () => {
    const page = await newPage(true);
    const results = [await visit(page, '/admin')];
    // Each tab, once its list (with the payloads as text) has rendered.
    const tabs: [RegExp, string][] = [
      [/article/i, 'Payloads'],
      [/comments/i, 'x@example.com'],
      [/sources/i, '__xss(50)'],
    ];
    for (const [tab, shows] of tabs) {
      await page.getByRole('tab', { name: tab }).click();
      await page.getByRole('tabpanel').getByText(shows).first().waitFor({ timeout: 10_000 });
      results.push({ pathname: `/admin ${tab}`, ...(await inspect(page)) });
    }
    for (const article of articles.slice(0, 4)) results.push(await visit(page, `/admin/editor/${article.id}`));
    expect(results.filter((r) => r.fired.length || r.dangerous.length)).toEqual([]);
    await page.context().close();
  });

  it('feed items and the source name arrive as inert text', async () => {
    const [item] = await feedArticles();
    expect(item, 'the feed item was ingested').toBeDefined();
    expect(item!.bodyHtml).not.toMatch(/<script|\son\w+=|javascript:|<iframe|<object|<svg|<math|style=/i);
    expect(item!.sourceLabel).toBe('<img src=x onerror=__xss(50)>');
  });
});

describe('path traversal', () => {
  /** Sends a request line exactly as written (no client-side normalisation of .. or %2e). */
  async function rawGet(target: string): Promise<{ status: number; body: string }> {
    const socket = await openSocket(server.url);
    const reply = readUntilClosed(socket, 10_000);
    socket.write(`GET ${target} HTTP/1.1\r\nHost: ${new URL(server.url).host}\r\nConnection: close\r\n\r\n`);
    const { data } = await reply;
    return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0), body: data };
  }

  it('static, image and page paths never reach files outside the served folders', async () => {
    const secrets = /passwordHash|argon2id|"sessions"|root:x:0:0|"storeId"|APP_SECRET|"dependencies"/;
    const targets = [
      '/images/../users.json',
      '/images/..%2fusers.json',
      '/images/%2e%2e/users.json',
      '/images/%2e%2e%2fsessions.json',
      '/images/....//users.json',
      '/images/..\\users.json',
      '/images/%252e%252e%252fusers.json',
      '/images/%c0%ae%c0%ae/users.json',
      '/images/.lock',
      '/images/..%00/users.json',
      '/../../../../etc/passwd',
      '/..%2f..%2f..%2f..%2fetc%2fpasswd',
      '/%2e%2e/%2e%2e/package.json',
      '/_astro/../../../package.json',
      '/_astro/..%2f..%2f..%2fpackage.json',
      '//etc/passwd',
      '/section/..%2f..%2f..%2fpackage.json',
      '/article/..%2F..%2F..%2Fpackage.json',
      '/article/%2e%2e%2f%2e%2e%2fserver%2fentry.mjs',
      '/.env',
      '/.git/config',
      '/..;/package.json',
      `/images/${'../'.repeat(12)}etc/passwd`,
      '/favicon.svg/..%2f..%2fpackage.json',
    ];
    for (const target of targets) {
      const { status, body } = await rawGet(target);
      expect(status, target).toBeGreaterThanOrEqual(300);
      expect(status, target).toBeLessThan(500);
      expect(body, target).not.toMatch(secrets);
    }
  });

  it('refuses traversal in hero image paths and never lets a slug leave the article folder', async () => {
    for (const heroImage of [
      '/images/../users.json',
      '/../../etc/passwd',
      '/images/%2e%2e/users.json',
      '/images/..\\..\\users.json',
      '//evil.example/x.jpg',
      'file:///etc/passwd',
      'javascript:alert(1)',
    ]) {
      const response = await admin.post('/api/articles', { title: 'Traversal hero', heroImage });
      expect(response.status, heroImage).toBe(400);
    }
    for (const imageUrl of ['/api/images/upload/../../users.json', 'file:///etc/passwd', '/etc/passwd', '../users.json']) {
      const response = await admin.post('/api/images/normalize', { imageUrl });
      expect(response.status, imageUrl).toBeGreaterThanOrEqual(400);
      expect(response.status, imageUrl).toBeLessThan(500);
    }
    const created = await createArticle(admin, { title: '../../../etc/passwd/..\\..\\x', status: 'published' });
    expect(created.slug).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/);
    await waitForIdleQueue(server.url);
    expect(fs.existsSync(path.join(server.clientDir, 'article', created.slug, 'index.html'))).toBe(true);
    // (A bare `..` would be resolved away by the client before it is sent; the raw-socket test covers it.)
    for (const slug of ['..%2F..%2Fusers', '..%2f..%2f..%2fpackage.json', '..%5c..%5cusers']) {
      const response = await fetch(new URL(`/api/articles/by-slug/${slug}`, server.url));
      expect(response.status, slug).toBe(404);
    }
  });
});
