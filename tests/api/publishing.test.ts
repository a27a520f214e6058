/**
 * The publishing pipeline end to end on the real built server: writes through the API regenerate
 * the static files on disk and what is served, jobs survive a crash, scheduled articles come due,
 * the caching headers, the twins' guard and the purge hook.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { makeDataDir, startServer, type TestServer } from '../helpers/server.ts';
import type { Article } from '../../src/schemas/article.ts';
import type { TestClient } from './support.ts';
import { adminClient, createArticle, readDataFile, startApiServer, waitForQuietPublishing } from './support.ts';
import { waitFor } from './support.ts';
import { manifestFileFor, readRenderManifest } from '../../src/server/publishing/manifest.ts';

const fileOf = (server: TestServer, publicPath: string) =>
  path.join(server.clientDir, ...publicPath.split('/').filter(Boolean), ...(/\.(xml|txt)$/.test(publicPath) ? [] : ['index.html']));

async function fetchText(server: TestServer, publicPath: string): Promise<{ status: number; text: string; headers: Headers }> {
  const response = await fetch(new URL(publicPath, server.url), { redirect: 'manual' });
  return { status: response.status, text: await response.text(), headers: response.headers };
}

/** The missing-article screen of docs/product.md (Reader screens), with HTTP 404 (not the generic 404 screen). */
function expectMissingArticleScreen(answer: { status: number; text: string; headers: Headers }): void {
  expect(answer.status).toBe(404);
  expect(answer.headers.get('content-type')).toMatch(/^text\/html/);
  expect(answer.text).toMatch(/<h1[^>]*>Article Not Found<\/h1>/);
  expect(answer.text).toContain("The article you're looking for doesn't exist.");
  expect(answer.text).not.toContain('404 Page Not Found');
  expect(answer.text).toContain('<meta name="robots" content="noindex, follow"');
}

/** Waits for the worker to drain: the queue empty and the manifest written after the last job. */
async function waitForIdle(server: TestServer): Promise<void> {
  const manifestFile = manifestFileFor(server.clientDir);
  // What the last check saw, for the timeout message (reading the store is asynchronous on PostgreSQL).
  let state = 'nothing read yet';
  await waitFor(
    () => `the regeneration queue to drain (${state})`,
    async () => {
      const jobs = (await readDataFile<{ jobs: unknown[] }>(server.dataDir, 'jobs')).jobs;
      const version = (await readDataFile<{ version: number }>(server.dataDir, 'articles')).version;
      const manifest = readRenderManifest(manifestFile);
      state = `jobs ${JSON.stringify(jobs)}, articles v${version}, manifest ${manifest ? JSON.stringify(manifest) : 'none'}`;
      if (jobs.length > 0) return false;
      return manifest?.version === version;
    },
  );
}

/** A GET with raw headers (fetch turns conditional requests into no-cache ones). */
function rawGet(server: TestServer, publicPath: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(new URL(publicPath, server.url), { headers }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', reject);
  });
}

function renderCount(server: TestServer, publicPath: string): number {
  return server
    .output()
    .split('\n')
    .filter((line) => line.startsWith(`[publish] ${publicPath} `)).length;
}

describe('runtime regeneration', () => {
  let server: TestServer;
  let admin: TestClient;

  beforeAll(async () => {
    server = await startApiServer();
    admin = await adminClient(server);
  });

  beforeEach(() => {
    onTestFailed(() => console.log(`--- server output (tail) ---\n${server.output().slice(-6000)}`));
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('publish -> the static file exists and is served, and the section page, feeds and sitemaps list it', async () => {
    const started = performance.now();
    const article = await createArticle(admin, {
      title: 'Harbour bridge reopens',
      section: 'tech',
      status: 'published',
      dek: 'Traffic flows again',
    });
    const answered = performance.now();
    const page = await waitFor('the article page', async () => {
      const r = await fetchText(server, `/article/${article.slug}`);
      return r.status === 200 ? r : undefined;
    });
    const served = performance.now();
    console.log(
      `[figure] publish API call ${(answered - started).toFixed(0)} ms; API call -> article page served ${(served - started).toFixed(0)} ms`,
    );
    const file = fileOf(server, `/article/${article.slug}`);
    expect(fs.existsSync(file)).toBe(true);
    expect(page.text).toBe(fs.readFileSync(file, 'utf8'));
    expect(page.text).toContain('Harbour bridge reopens');
    expect(page.headers.get('content-type')).toMatch(/text\/html/);

    await waitFor('the section page to list it', async () =>
      (await fetchText(server, '/section/tech')).text.includes(`/article/${article.slug}`),
    );
    const month = `/sitemaps/${article.publishedAt!.slice(0, 7)}.xml`;
    await waitFor('the sitemap index to name its month', async () => (await fetchText(server, '/sitemap.xml')).text.includes(month));
    for (const feed of ['/rss.xml', '/section/tech/rss.xml', month, '/news-sitemap.xml']) {
      await waitFor(`${feed} to list it`, async () => (await fetchText(server, feed)).text.includes(`/article/${article.slug}`));
    }
    expect((await fetchText(server, '/section/world')).text).not.toContain(`/article/${article.slug}`);
  });

  it('update -> the file changes; a draft edit regenerates nothing', async () => {
    const article = await createArticle(admin, { title: 'Budget talks resume', section: 'business', status: 'published' });
    const file = fileOf(server, `/article/${article.slug}`);
    await waitFor('the first render', async () => fs.existsSync(file));
    const before = fs.readFileSync(file, 'utf8');
    const response = await admin.put(`/api/articles/${article.id}`, { dek: 'Negotiators return to the table' });
    expect(response.status).toBe(200);
    await waitFor('the file to change', async () => fs.readFileSync(file, 'utf8') !== before);
    expect(fs.readFileSync(file, 'utf8')).toContain('Negotiators return to the table');

    // Quiet as a whole, not only the page queue: the start's reconcile and the search jobs it queues may still be running.
    await waitForIdle(server);
    await waitForQuietPublishing(admin);
    const linesBefore = server.output().split('\n').length;
    const draft = await createArticle(admin, { title: 'Quiet draft', section: 'business' });
    await admin.put(`/api/articles/${draft.id}`, { title: 'Quiet draft, edited' });
    await waitForIdle(server);
    await waitForQuietPublishing(admin);
    expect(
      server
        .output()
        .split('\n')
        .slice(linesBefore)
        .filter((l) => l.startsWith('[publish] /')),
    ).toEqual([]);
    expect(fs.existsSync(fileOf(server, `/article/${draft.slug}`))).toBe(false);
  });

  it('unpublish and delete -> 404, the file gone, and gone from listings, feeds and sitemap', async () => {
    const a = await createArticle(admin, { title: 'Mayor resigns', section: 'politics', status: 'published' });
    const b = await createArticle(admin, { title: 'Council votes', section: 'politics', status: 'published' });
    await waitFor(
      'both pages',
      async () => fs.existsSync(fileOf(server, `/article/${a.slug}`)) && fs.existsSync(fileOf(server, `/article/${b.slug}`)),
    );
    await waitForIdle(server);

    expect((await admin.put(`/api/articles/${a.id}`, { status: 'draft' })).status).toBe(200);
    expect((await admin.delete(`/api/articles/${b.id}`)).status).toBeLessThan(300);
    for (const slug of [a.slug, b.slug]) {
      const gone = await waitFor(`${slug} to answer 404`, async () => {
        const r = await fetchText(server, `/article/${slug}`);
        return r.status === 404 ? r : undefined;
      });
      expect(fs.existsSync(fileOf(server, `/article/${slug}`))).toBe(false);
      expectMissingArticleScreen(gone);
    }
    await waitForIdle(server);
    // Other articles of the same month keep its sitemap (this suite publishes many).
    for (const publicPath of [
      '/section/politics',
      '/rss.xml',
      '/section/politics/rss.xml',
      `/sitemaps/${a.publishedAt!.slice(0, 7)}.xml`,
      '/news-sitemap.xml',
    ]) {
      const { status, text } = await fetchText(server, publicPath);
      expect(status, publicPath).toBe(200);
      expect(text, publicPath).not.toContain(`/article/${a.slug}`);
      expect(text, publicPath).not.toContain(`/article/${b.slug}`);
    }
  });

  it('a slug that never existed answers 404 with the prerendered Article Not Found screen, for GET and HEAD', async () => {
    const missing = await fetchText(server, '/article/no-such-article-ever');
    expectMissingArticleScreen(missing);
    // The very file the build prerendered, not a render per request.
    expect(missing.text).toBe(fs.readFileSync(path.join(server.clientDir, 'article-404', 'index.html'), 'utf8'));
    const head = await fetch(new URL('/article/no-such-article-ever', server.url), { method: 'HEAD' });
    expect(head.status).toBe(404);
    // Other unknown paths keep the generic screen.
    const other = await fetchText(server, '/no-such-page');
    expect(other.status).toBe(404);
    expect(other.text).toContain('404 Page Not Found');
    expect(other.text).not.toContain('Article Not Found');
  });

  it('pagination: the 13th article creates page 2, unpublishing one removes it again (404)', async () => {
    const made: Article[] = [];
    for (let i = 1; i <= 13; i++)
      made.push(await createArticle(admin, { title: `Match report ${i}`, section: 'sports', status: 'published' }));
    await waitFor('page 2', async () => (await fetchText(server, '/section/sports/page/2')).status === 200);
    expect((await fetchText(server, '/section/sports/page/2')).text).toContain(`/article/${made[0]!.slug}`);
    await waitForIdle(server);
    expect((await admin.put(`/api/articles/${made[6]!.id}`, { status: 'archived' })).status).toBe(200);
    await waitFor('page 2 to go', async () => (await fetchText(server, '/section/sports/page/2')).status === 404);
    expect(fs.existsSync(fileOf(server, '/section/sports/page/2'))).toBe(false);
    expect((await fetchText(server, '/section/sports')).text).toContain(`/article/${made[0]!.slug}`);
  });

  it('a publish into a section of many pages writes a bounded set: old archive files stay byte-identical and untouched', async () => {
    for (let i = 0; i < 12 * 5 + 2; i++)
      await createArticle(admin, { title: `Market wrap ${i}`, section: 'business', status: 'published' });
    await waitForIdle(server);
    const files = () =>
      fs
        .readdirSync(path.join(server.clientDir, 'section', 'business', 'page'))
        .map(Number)
        .sort((a, b) => a - b);
    expect(files()).toEqual([2, 3, 4, 5, 6]);
    const snapshot = () =>
      new Map(
        files().map((n) => {
          const file = fileOf(server, `/section/business/page/${n}`);
          return [n, { bytes: fs.readFileSync(file), mtimeMs: fs.statSync(file).mtimeMs }] as const;
        }),
      );
    const health = async () =>
      ((await (await fetch(new URL('/api/health', server.url))).json()) as { publishing: { lastBatchPages: number } }).publishing;
    const before = snapshot();
    const page1Before = fs.readFileSync(fileOf(server, '/section/business'));
    const published = await createArticle(admin, { title: 'Fresh market wrap', section: 'business', status: 'published' });
    await waitForIdle(server);
    const after = snapshot();
    // Files 2-5 are full and hold the oldest articles: the same bytes, never rewritten.
    for (const n of [2, 3, 4, 5]) {
      expect(after.get(n)!.bytes.equals(before.get(n)!.bytes), `page ${n} bytes`).toBe(true);
      expect(after.get(n)!.mtimeMs, `page ${n} mtime`).toBe(before.get(n)!.mtimeMs);
    }
    expect(after.get(6)!.bytes.equals(before.get(6)!.bytes)).toBe(false);
    expect(fs.readFileSync(fileOf(server, '/section/business')).equals(page1Before)).toBe(false);
    expect((await fetchText(server, '/section/business')).text).toContain(`/article/${published.slug}`);
    // The article, page 1, the newest archive file, the section feed, the site feed, both sitemaps' parts.
    const { lastBatchPages } = await health();
    expect(lastBatchPages).toBeLessThanOrEqual(9);
    const queued = server
      .output()
      .split('\n')
      .filter((l) => /\[publish\] \d+ pages queued/.test(l))
      .pop();
    expect(queued).toBe(`[publish] ${lastBatchPages} pages queued for 1 article change(s)`);
  });

  it('render twins answer an outside request 404 whatever it sends (only the render thread reaches them)', async () => {
    const article = await createArticle(admin, { title: 'Twin check', section: 'culture', status: 'published' });
    await waitFor('the page', async () => fs.existsSync(fileOf(server, `/article/${article.slug}`)));
    const month = article.publishedAt!.slice(0, 7);
    // Every twin route: the pages, and the machine files the render thread now draws too.
    const twins = [
      `/render-twin/article/${article.slug}`,
      '/render-twin/section/culture',
      '/render-twin/section/culture/page/2',
      '/render-twin/corrections',
      '/render-twin/rss.xml',
      '/render-twin/section/culture/rss.xml',
      '/render-twin/section/culture/pages.json',
      '/render-twin/sitemap.xml',
      '/render-twin/sitemaps/pages.xml',
      `/render-twin/sitemaps/${month}.xml`,
      '/render-twin/news-sitemap.xml',
      '/render-twin/robots.txt',
    ];
    const file = JSON.stringify({ twin: { route: 'file', props: { kind: 'robots' } } });
    // No header and the old secret's header, locals as headers, cookies and forwarding, a query string, a HEAD.
    const attempts: Array<{ headers?: Record<string, string>; method?: string; query?: string }> = [
      {},
      { headers: { 'x-meridian-render': 'guess' } },
      { headers: { 'x-astro-locals': file, 'x-meridian-render-result': 'missing' } },
      { headers: { cookie: `twin=${encodeURIComponent(file)}`, 'x-forwarded-for': '127.0.0.1', 'x-real-ip': '127.0.0.1' } },
      { query: `?twin=${encodeURIComponent(file)}` },
      { method: 'HEAD' },
    ];
    for (const twin of twins) {
      for (const { headers = {}, method = 'GET', query = '' } of attempts) {
        const response = await fetch(new URL(`${twin}${query}`, server.url), { method, headers });
        const body = await response.text();
        const label = `${method} ${twin}${query} ${JSON.stringify(headers)}`;
        expect(response.status, label).toBe(404);
        expect(response.headers.get('x-meridian-render-result'), label).toBeNull();
        expect(body, label).not.toMatch(/<\?xml|User-agent|"pages":|Twin check/);
      }
    }
  });

  it('HTML: short max-age, stale-while-revalidate, validators and 304; hashed assets immutable', async () => {
    const article = await createArticle(admin, { title: 'Cache check', section: 'culture', status: 'published' });
    await waitFor('the page', async () => fs.existsSync(fileOf(server, `/article/${article.slug}`)));
    // Validators are per encoding (tests/api/compression.test.ts): ask for the identity bytes, as rawGet does.
    const first = await fetch(new URL(`/article/${article.slug}`, server.url), { headers: { 'Accept-Encoding': 'identity' } });
    await first.text();
    expect(first.headers.get('cache-control')).toMatch(/max-age=\d+/);
    expect(first.headers.get('cache-control')).toMatch(/stale-while-revalidate=\d+/);
    const etag = first.headers.get('etag');
    expect(etag).toBeTruthy();
    expect(first.headers.get('last-modified')).toBeTruthy();
    expect(await rawGet(server, `/article/${article.slug}`, { 'If-None-Match': etag! })).toBe(304);
    expect(await rawGet(server, `/article/${article.slug}`, { 'If-Modified-Since': first.headers.get('last-modified')! })).toBe(304);
    expect(await rawGet(server, `/article/${article.slug}`, { 'If-None-Match': 'W/"something-else"' })).toBe(200);

    const asset = /\/_astro\/[^"' )]+\.(?:css|js)/.exec(await (await fetch(new URL(`/article/${article.slug}`, server.url))).text())?.[0];
    expect(asset).toBeTruthy();
    const assetResponse = await fetch(new URL(asset!, server.url));
    await assetResponse.arrayBuffer();
    expect(assetResponse.status).toBe(200);
    expect(assetResponse.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  });

  it("re-indexes today's search head for a published article and swaps its bundle in", async () => {
    const article = await createArticle(admin, { title: 'Quasar discovered', section: 'tech', status: 'published' });
    const month = `head-${article.publishedAt!.slice(0, 10)}`;
    await waitFor('the page', async () => fs.existsSync(fileOf(server, `/article/${article.slug}`)));
    const builds = () =>
      server
        .output()
        .split('\n')
        .filter((l) => l.includes('search index rebuilt') && l.endsWith(`(bundle ${month})`)).length;
    const before = builds();
    await waitFor('a search index rebuild', async () => builds() > before);
    const periods = (await (await fetch(new URL('/pagefind/periods.json', server.url))).json()) as { periods: string[] };
    expect(periods.periods).toContain(month);
    const entry = await fetch(new URL(`/pagefind/${month}/pagefind-entry.json`, server.url));
    expect(entry.status).toBe(200);
    await entry.text();
    expect((await fetch(new URL(`/pagefind/${month}/pagefind.js`, server.url))).status).toBe(200);
    // Pagefind's own UI bundles are not shipped with every bundle.
    expect((await fetch(new URL(`/pagefind/${month}/pagefind-ui.js`, server.url))).status).toBe(404);
    // No half-built or retired bundle left behind (the day tier's record is the one dot file that stays)
    // once the worker settles: a later re-index of the head may be building while this first one is checked.
    const leftovers = () => fs.readdirSync(path.join(server.clientDir, 'pagefind')).filter((name) => name.startsWith('.'));
    await waitFor(
      () => `no half-built or retired bundle (${leftovers().join(', ')})`,
      async () => leftovers().length === 0,
    );
  });
});

describe('coalescing a burst of saves', () => {
  // A settle window wider than any one save takes on a loaded machine (the default 100 ms is not, at
  // load 12), so what is checked is the debounce itself, not how fast the machine answers.
  let debounced: { server: TestServer; admin: TestClient };

  beforeAll(async () => {
    const server = await startApiServer({ REGENERATION_SETTLE_MS: '1500' });
    debounced = { server, admin: await adminClient(server) };
  });

  beforeEach(() => {
    onTestFailed(() => console.log(`--- server output (tail) ---\n${debounced.server.output().slice(-6000)}`));
  });

  afterAll(async () => {
    await debounced?.server.stop();
  });

  it('ten quick saves render the article far fewer than ten times', async () => {
    const { server, admin } = debounced;
    const article = await createArticle(admin, { title: 'Storm warning', section: 'world', status: 'published' });
    await waitForIdle(server);
    const publicPath = `/article/${article.slug}`;
    const before = renderCount(server, publicPath);
    for (let i = 1; i <= 10; i++) {
      expect((await admin.put(`/api/articles/${article.id}`, { dek: `Update number ${i}` })).status).toBe(200);
    }
    await waitFor('the last save on disk', async () => fs.readFileSync(fileOf(server, publicPath), 'utf8').includes('Update number 10'));
    await waitForIdle(server);
    const renders = renderCount(server, publicPath) - before;
    console.log(`[figure] 10 quick saves -> ${renders} render(s) of the article`);
    expect(renders).toBeGreaterThanOrEqual(1);
    expect(renders).toBeLessThanOrEqual(3);
  });
});

describe('jobs, restarts and scheduled publishing', () => {
  /**
   * A server with PURGE_URL set and the endpoint it posts to (each batch it received), shared by the
   * two tests that need no fresh server of their own: the scheduled article's and the purge hook's.
   * Started by the first of them to ask.
   */
  let hooked: Promise<{ server: TestServer; received: Array<{ paths: string[]; urls: string[] }> }> | undefined;
  let hook: http.Server | undefined;
  const hookedServer = () =>
    (hooked ??= (async () => {
      const received: Array<{ paths: string[]; urls: string[] }> = [];
      hook = http.createServer((req, res) => {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString()));
        req.on('end', () => {
          received.push(JSON.parse(body) as { paths: string[]; urls: string[] });
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => hook!.listen(0, '127.0.0.1', resolve));
      const port = (hook.address() as { port: number }).port;
      const server = await startServer({ env: { PURGE_URL: `http://127.0.0.1:${port}/purge`, SITE_URL: 'https://news.example' } });
      return { server, received };
    })());

  afterAll(async () => {
    await hooked?.then(
      ({ server }) => server.stop(),
      () => {},
    );
    hook?.close();
  });

  it('restart in the middle of a queue (SIGKILL) -> the stored jobs complete', async () => {
    const dataDir = makeDataDir();
    // A long settle time keeps the jobs queued, so the crash lands while they are pending.
    const first = await startServer({ dataDir, env: { REGENERATION_SETTLE_MS: '600000' } });
    const admin = await adminClient(first);
    const article = await createArticle(admin, { title: 'Crash course', section: 'world', status: 'published' });
    const pending = (await readDataFile<{ jobs: Array<{ path: string }> }>(dataDir, 'jobs')).jobs.map((j) => j.path);
    expect(pending).toContain(`/article/${article.slug}`);
    expect(pending).toContain('/section/world');
    await first.kill();
    expect(fs.existsSync(fileOf(first, `/article/${article.slug}`))).toBe(false);

    const second = await startServer({ dataDir });
    try {
      await waitFor('the article page after the restart', async () => (await fetchText(second, `/article/${article.slug}`)).status === 200);
      await waitForIdle(second);
      expect((await fetchText(second, '/section/world')).text).toContain(`/article/${article.slug}`);
    } finally {
      await second.stop();
    }
    // Two server starts and a reconcile: over 30 s on the loaded 2-core machine, before issue 32 as after.
  }, 90_000);

  it('a scheduled article that came due while the server was down is published right after it starts', async () => {
    const dataDir = makeDataDir();
    const first = await startServer({ dataDir });
    const admin = await adminClient(first);
    const due = new Date(Date.now() + 2500).toISOString();
    const article = await createArticle(admin, { title: 'Embargoed results', section: 'business', status: 'scheduled', scheduledFor: due });
    await first.stop();
    const stillScheduled = (await readDataFile<{ articles: Article[] }>(dataDir, 'articles')).articles.find((a) => a.id === article.id);
    expect(stillScheduled?.status).toBe('scheduled');
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(due) - Date.now() + 100)));

    const second = await startServer({ dataDir });
    try {
      await waitFor('the scheduled article page', async () => (await fetchText(second, `/article/${article.slug}`)).status === 200);
      expect(second.output()).toContain(`scheduled article published: ${article.slug}`);
      const published = (await readDataFile<{ articles: Article[] }>(dataDir, 'articles')).articles.find((a) => a.id === article.id);
      expect(published?.status).toBe('published');
      // The section page is a job of its own, which may land a moment after the article page.
      await waitFor('/section/business to list it', async () =>
        (await fetchText(second, '/section/business')).text.includes(`/article/${article.slug}`),
      );
    } finally {
      await second.stop();
    }
  });

  it('the running server publishes a scheduled article when it comes due', async () => {
    const { server } = await hookedServer();
    const admin = await adminClient(server);
    const article = await createArticle(admin, {
      title: 'Midday bulletin',
      section: 'home',
      status: 'scheduled',
      scheduledFor: new Date(Date.now() + 1500).toISOString(),
    });
    expect((await fetchText(server, `/article/${article.slug}`)).status).toBe(404);
    await waitFor('the scheduled article page', async () => (await fetchText(server, `/article/${article.slug}`)).status === 200);
    await waitFor('/section/home to list it', async () =>
      (await fetchText(server, '/section/home')).text.includes(`/article/${article.slug}`),
    );
    expect(
      server
        .output()
        .split('\n')
        .filter((l) => l.includes(`scheduled article published: ${article.slug}`)),
    ).toHaveLength(1);
  });

  it('PURGE_URL receives the regenerated paths', async () => {
    const { server, received } = await hookedServer();
    const admin = await adminClient(server);
    const article = await createArticle(admin, { title: 'Purge me', section: 'opinion', status: 'published' });
    const batch = await waitFor('a purge notification', async () => received.find((b) => b.paths.includes(`/article/${article.slug}`)));
    expect(batch.urls).toContain(`https://news.example/article/${article.slug}`);
  });

  it('a hanging PURGE_URL never delays publishing: each try is cut off, retried later and logged', async () => {
    let hanging = true;
    const received: Array<{ paths: string[] }> = [];
    /** Requests the hook left hanging, and when the server cut each off (closed its connection). */
    let hung = 0;
    const cutAt: number[] = [];
    const hook = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        if (hanging) {
          hung++;
          res.on('close', () => cutAt.push(performance.now()));
          return;
        }
        received.push(JSON.parse(body) as { paths: string[] });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    const port = (hook.address() as { port: number }).port;
    const server = await startServer({ env: { PURGE_URL: `http://127.0.0.1:${port}/purge`, SITE_URL: 'https://news.example' } });
    try {
      const admin = await adminClient(server);
      const first = await createArticle(admin, { title: 'Purge hangs first', section: 'opinion', status: 'published' });
      await waitFor('the first article to be live', async () => (await fetchText(server, `/article/${first.slug}`)).status === 200);
      // The purge of the first publish is now waiting for an answer that never comes...
      await waitFor('the hanging purge request', async () => hung > 0);
      expect(cutAt).toHaveLength(0);
      // ...and the next publish goes live meanwhile, long before that request is cut off (5 s).
      const second = await createArticle(admin, { title: 'Purge hangs second', section: 'opinion', status: 'published' });
      await waitFor('the second article to be live', async () => (await fetchText(server, `/article/${second.slug}`)).status === 200);
      expect(cutAt, 'the second publish waited for the purge hook').toHaveLength(0);

      // Cut off after 5 s and logged; the endpoint recovers and the retry carries both publishes' paths.
      await waitFor('the purge failure line', async () => server.output().includes('[publish] purge hook failed for'), 20_000);
      expect(cutAt.length).toBeGreaterThan(0);
      hanging = false;
      await waitFor(
        'the retried purge',
        async () => [first, second].every((a) => received.some((b) => b.paths.includes(`/article/${a.slug}`))),
        30_000,
      );
      // The endpoint counts the request before its answer reaches the server, and the line reaches us through a pipe after.
      await waitFor(
        'the recovery line',
        async () => /\[publish\] purge hook answers again after \d+ failed tries/.test(server.output()),
        15_000,
      );
      expect(server.output()).toMatch(
        /\[publish\] purge hook failed for \d+ path\(s\) \(no answer within 5 s\); \d+ path\(s\) wait, next try in 5 s/,
      );
    } finally {
      await server.stop();
      hook.closeAllConnections();
      hook.close();
    }
  }, 90_000);
});
