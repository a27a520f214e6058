/**
 * Security headers and the Content-Security-Policy (issue 8): every answer carries nosniff, a
 * Referrer-Policy and frame protection; every page has a script policy without 'unsafe-inline' that
 * lists each inline script it carries; Chromium loads the reader and admin screens with no CSP
 * violation; and nothing under /images/ is ever served as HTML or script.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN,
  adminClient,
  launchChromium,
  pageSettled,
  startHardenedServer,
  trackRequests,
  waitForFile,
  waitForIdleQueue,
  type TestClient,
  type TestServer,
} from './support.ts';

let server: TestServer;
let admin: TestClient;
let browser: Browser;
let article: { id: string; slug: string };

beforeAll(async () => {
  // Demo content: real cards, hero images, comments and sources, as readers and editors see them.
  [server, browser] = await Promise.all([startHardenedServer({ SEED: 'demo' }), launchChromium()]);
  admin = await adminClient(server);
  await waitForIdleQueue(server.url, 60_000);
  article = ((await (await admin.get('/api/articles?section=world&pageSize=1')).json()) as { id: string; slug: string }[])[0]!;
  // The demo articles' pages are written by the start-up reconciliation, which runs after the server listens.
  const all = (await (await admin.get('/api/articles?status=published&pageSize=100')).json()) as { slug: string }[];
  for (const { slug } of all) await waitForFile(path.join(server.clientDir, 'article', slug, 'index.html'));
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

function expectBaseHeaders(headers: Headers, what: string): void {
  expect(headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(headers.get('referrer-policy'), what).toMatch(/^(no-referrer|strict-origin|strict-origin-when-cross-origin|same-origin)$/);
  expect(headers.get('x-frame-options'), what).toBe('DENY');
  expect(headers.get('content-security-policy'), what).toMatch(/frame-ancestors 'none'/);
}

/**
 * The script-src of a page's policy (prerendered pages carry it in a <meta>, on-demand ones in the
 * header), and every inline script with its hash.
 */
function scriptPolicyOf(
  html: string,
  header?: string | null,
): { scriptSrc: string | undefined; inline: { hash: string; text: string }[]; handlers: string[] } {
  const meta = /<meta\s+http-equiv="content-security-policy"\s+content="([^"]*)"/i.exec(html)?.[1]?.replace(/&#39;|&#x27;/g, "'");
  const scriptSrc = [meta, header]
    .filter(Boolean)
    .join(';')
    .split(';')
    .map((d) => d.trim())
    .find((d) => d.startsWith('script-src '));
  const inline = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)]
    .filter((m) => !/\bsrc=/i.test(m[1]!) && !/type="application\/(ld\+)?json"/i.test(m[1]!))
    .map((m) => ({ hash: `'sha256-${createHash('sha256').update(m[2]!).digest('base64')}'`, text: m[2]!.slice(0, 60) }));
  // Inline event handler attributes cannot be allowed by a hash (without 'unsafe-hashes'): there must be none.
  const handlers = [...html.matchAll(/<[a-z][^>]*\s(on[a-z]+)\s*=/gi)].map((m) => m[1]!);
  return { scriptSrc, inline, handlers };
}

describe('headers on every kind of answer', () => {
  it('static pages, assets, API answers, errors, admin screens and images carry nosniff, Referrer-Policy and frame protection', async () => {
    const html = await (await fetch(new URL('/section/world', server.url))).text();
    const asset = /\/_astro\/[^"]+\.js/.exec(html)![0];
    const image = /\/images\/[a-f0-9]+\/\d+\.webp/.exec(await (await fetch(new URL(`/article/${article.slug}`, server.url))).text())?.[0];
    const paths = [
      '/section/world',
      `/article/${article.slug}`,
      '/search',
      '/about',
      '/no/such/page',
      asset,
      '/api/health',
      '/api/articles/nope',
      '/api/nothing',
      '/login',
      '/rss.xml',
      '/sitemap.xml',
      '/newsletter/unsubscribe?token=x',
    ];
    if (image) paths.push(image);
    for (const p of paths) expectBaseHeaders((await fetch(new URL(p, server.url), { redirect: 'manual' })).headers, p);
    for (const p of ['/admin', '/admin/editor', `/admin/editor/${article.id}`]) {
      const response = await admin.get(p);
      expect(response.status, p).toBe(200);
      expectBaseHeaders(response.headers, p);
    }
    const post = await admin.request('POST', '/api/articles', { json: { nope: 1 } });
    expect(post.status).toBe(400);
    expectBaseHeaders(post.headers, 'POST 400');
  });

  it('every page has a script policy without unsafe-inline that lists each inline script, and no inline handlers', async () => {
    const pages: { name: string; html: string; header?: string | null }[] = [];
    // Every HTML file the server serves (built and regenerated), plus the screens rendered on demand.
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory() && entry.name !== 'pagefind' && entry.name !== '_astro') walk(full);
        else if (entry.name.endsWith('.html'))
          pages.push({ name: path.relative(server.clientDir, full), html: fs.readFileSync(full, 'utf8') });
      }
    };
    walk(server.clientDir);
    expect(pages.filter((p) => p.name.startsWith('article/')).length).toBeGreaterThan(10);
    for (const p of ['/login', '/admin', '/admin/editor', `/admin/editor/${article.id}`, '/newsletter/unsubscribe?token=x']) {
      // /login redirects a signed-in editor: it is fetched signed out.
      const response = p === '/login' ? await fetch(new URL(p, server.url)) : await admin.get(p);
      expect(response.status, p).toBeLessThan(500);
      pages.push({ name: p, html: await response.text(), header: response.headers.get('content-security-policy') });
    }
    for (const { name, html, header } of pages) {
      const { scriptSrc, inline, handlers } = scriptPolicyOf(html, header);
      expect(scriptSrc, `${name} has no script-src policy`).toBeDefined();
      expect(scriptSrc, name).not.toMatch(/'unsafe-inline'|'unsafe-eval'|\*/);
      for (const script of inline) expect(scriptSrc, `${name}: inline script without a hash: ${script.text}`).toContain(script.hash);
      expect(handlers, name).toEqual([]);
    }
  });
});

describe('Chromium loads every screen without a CSP violation', () => {
  /** Lets the islands hydrate (a violation surfaces when their code runs) and their first calls land and be drawn. */
  async function settle(page: Page): Promise<void> {
    await page.waitForFunction(() => document.querySelectorAll('astro-island[ssr]:not([client="visible"])').length === 0, undefined, {
      timeout: 10_000,
    });
    await pageSettled(page);
  }

  /** Opens a page, collects violations (the event and the console), lets islands hydrate and work. */
  async function visit(page: Page, pathname: string, act?: (page: Page) => Promise<void>): Promise<string[]> {
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to (execute|load|apply|connect|frame|compile)/i.test(message.text()))
        violations.push(`${pathname}: ${message.text()}`);
    });
    const response = await page.goto(new URL(pathname, server.url).href, { waitUntil: 'load' });
    expect(response?.status(), pathname).toBeLessThan(500);
    await settle(page);
    if (act) {
      await act(page);
      await settle(page);
    }
    const events = await page.evaluate(() => (window as unknown as { __csp: string[] }).__csp);
    return [...violations, ...events.map((e) => `${pathname}: ${e}`)];
  }

  async function newPage(signedIn: boolean): Promise<Page> {
    const context = await browser.newContext();
    await context.addInitScript(() => {
      const w = window as unknown as { __csp: string[] };
      w.__csp = [];
      document.addEventListener('securitypolicyviolation', (e) =>
        w.__csp.push(`${e.violatedDirective} blocked ${e.blockedURI || 'inline'} (${e.sourceFile}:${e.lineNumber}) ${e.sample}`),
      );
    });
    if (signedIn) {
      await context.addCookies([
        { name: 'session', value: admin.cookies.get('session')!, url: server.url, httpOnly: true, sameSite: 'Lax' },
      ]);
    }
    return trackRequests(await context.newPage(), server.url);
  }

  it('reader pages: sections, an article (and a vote), search, static pages, the 404 screen', async () => {
    const page = await newPage(false);
    const violations: string[] = [];
    violations.push(...(await visit(page, '/section/world')));
    violations.push(...(await visit(page, '/section/home')));
    violations.push(
      ...(await visit(page, `/article/${article.slug}`, async (p) => {
        // Islands hydrate when visible: scroll to them, then use them (a vote and a comment go through the API).
        const like = p.getByTestId('like-button');
        await like.scrollIntoViewIfNeeded();
        await like.click({ timeout: 10_000 });
        await p.getByTestId('like-count').filter({ hasText: /[1-9]/ }).waitFor({ timeout: 10_000 });
      })),
    );
    violations.push(
      ...(await visit(page, '/search?q=the', async (p) => {
        // Results come from Pagefind (fetch + WebAssembly) in the browser.
        await p.getByText(/results for/i).waitFor({ timeout: 10_000 });
      })),
    );
    for (const p of ['/about', '/cookies', '/no/such/page', '/newsletter/unsubscribe?token=abc'])
      violations.push(...(await visit(page, p)));
    expect(violations, violations.join('\n')).toEqual([]);
    await page.context().close();
  });

  it('admin screens: login, dashboard, the editor', async () => {
    const anonymous = await newPage(false);
    const violations = await visit(anonymous, '/login', async (p) => {
      await p.getByLabel('Username', { exact: true }).fill(ADMIN.username);
      await p.getByLabel('Password', { exact: true }).fill(ADMIN.password);
      await p.getByRole('button', { name: /sign in|log in/i }).click();
      await p.waitForURL(/\/admin/);
    });
    await anonymous.context().close();
    const page = await newPage(true);
    violations.push(...(await visit(page, '/admin')));
    violations.push(...(await visit(page, '/admin/editor')));
    violations.push(...(await visit(page, `/admin/editor/${article.id}`)));
    expect(violations).toEqual([]);
    await page.context().close();
  });
});

describe('/images/ serves images only', () => {
  it('never serves HTML, SVG or script from the images folder, whatever lands there', async () => {
    const dir = path.join(server.dataDir, 'images', 'planted');
    fs.mkdirSync(dir, { recursive: true });
    const planted: Record<string, string> = {
      'x.html': '<script>alert(1)</script>',
      'x.svg': '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>',
      'x.js': 'alert(1)',
      'x.xml': '<x/>',
      'x.webp.html': '<script>alert(1)</script>',
      noext: '<script>alert(1)</script>',
    };
    for (const [name, body] of Object.entries(planted)) fs.writeFileSync(path.join(dir, name), body);
    for (const name of Object.keys(planted)) {
      const response = await fetch(new URL(`/images/planted/${name}`, server.url));
      const type = response.headers.get('content-type') ?? '';
      expect(type, name).not.toMatch(/html|svg|javascript|xml/);
      expect(response.status, name).toBe(404);
    }
  });

  it('serves a real image as image/webp under a sandboxing policy and nosniff', async () => {
    const html = await (await fetch(new URL(`/article/${article.slug}`, server.url))).text();
    const image = /\/images\/[a-f0-9]+\/\d+\.webp/.exec(html)?.[0];
    expect(image, 'the demo article has a hero image').toBeDefined();
    const response = await fetch(new URL(image!, server.url));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/webp');
    expect(response.headers.get('content-security-policy')).toMatch(/sandbox/);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });
});
