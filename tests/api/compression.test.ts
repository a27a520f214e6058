/**
 * Compressed static answers: brotli and gzip twins written with every file (build, regeneration,
 * search index) and served by Accept-Encoding q-values, with Vary, validators per encoding and 304s;
 * a page replaced on disk (regeneration, a swapped folder) is never answered with a stale twin.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyLiveFolder, makeDataDir, siteCopyFor, startServer, type TestServer } from '../helpers/server.ts';
import { compressTree } from '../../src/server/publishing/compress.ts';
import { adminClient, createArticle, waitForIdleQueue } from './support.ts';

type Raw = { status: number; headers: http.IncomingHttpHeaders; body: Buffer };

/** A GET with exactly these headers and the body as sent (fetch would decode it and add its own Accept-Encoding). */
function rawGet(base: string, pathname: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const request = http.request(new URL(pathname, base), { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end();
  });
}

function decode(raw: Raw): Buffer {
  const encoding = raw.headers['content-encoding'];
  if (encoding === 'br') return zlib.brotliDecompressSync(raw.body);
  if (encoding === 'gzip') return zlib.gunzipSync(raw.body);
  expect(encoding).toBeUndefined();
  return raw.body;
}

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

let server: TestServer;
let site: string;
let script: string;
let stylesheet: string;

beforeAll(async () => {
  const dataDir = makeDataDir();
  site = siteCopyFor(dataDir);
  // Two real files of the types the build does not emit at a compressible size (JSON, plain text),
  // compressed by the same post-build step as the rest.
  fs.writeFileSync(
    path.join(site, 'bench-fixture.json'),
    JSON.stringify({ sections: Array.from({ length: 60 }, (_, i) => ({ id: i, name: `Section ${i}`, live: i % 2 === 0 })) }),
  );
  fs.writeFileSync(path.join(site, 'humans.txt'), 'Meridian News newsroom and engineering.\n'.repeat(40));
  await compressTree(site);
  server = await startServer({ dataDir, env: { TRUST_PROXY: 'true', SERVE_DIR: site } });
  const astro = fs.readdirSync(path.join(site, '_astro'));
  script = `/_astro/${astro.filter((name) => name.endsWith('.js')).sort((a, b) => fs.statSync(path.join(site, '_astro', b)).size - fs.statSync(path.join(site, '_astro', a)).size)[0]}`;
  stylesheet = `/_astro/${astro.find((name) => name.endsWith('.css'))}`;
});

afterAll(async () => {
  await server?.stop();
});

describe('compressed answers for every text type', () => {
  const cases = () => [
    { path: '/about', type: 'text/html', file: 'about/index.html' },
    { path: script, type: 'text/javascript', file: script.slice(1) },
    { path: stylesheet, type: 'text/css', file: stylesheet.slice(1) },
    { path: '/rss.xml', type: 'application/xml', file: 'rss.xml' },
    { path: '/sitemaps/pages.xml', type: 'application/xml', file: 'sitemaps/pages.xml' },
    { path: '/bench-fixture.json', type: 'application/json', file: 'bench-fixture.json' },
    { path: '/favicon.svg', type: 'image/svg+xml', file: 'favicon.svg' },
    { path: '/humans.txt', type: 'text/plain', file: 'humans.txt' },
  ];

  it('brotli, gzip and identity each decode to the file on disk, with Vary and the right length', async () => {
    for (const { path: pathname, type, file } of cases()) {
      const identity = fs.readFileSync(path.join(site, file));
      for (const [accept, encoding] of [
        ['br', 'br'],
        ['gzip', 'gzip'],
        ['', undefined],
        ['identity', undefined],
      ] as const) {
        const raw = await rawGet(server.url, pathname, accept ? { 'Accept-Encoding': accept } : {});
        expect(raw.status, `${pathname} ${accept}`).toBe(200);
        expect(raw.headers['content-type'], pathname).toContain(type);
        expect(raw.headers['content-encoding'], `${pathname} ${accept}`).toBe(encoding);
        expect(raw.headers.vary, pathname).toBe('Accept-Encoding');
        expect(Number(raw.headers['content-length'])).toBe(raw.body.byteLength);
        expect(decode(raw).equals(identity), `${pathname} ${accept}`).toBe(true);
        if (encoding) expect(raw.body.byteLength, `${pathname} ${accept}`).toBeLessThan(identity.byteLength);
        // The security headers come with cached answers too.
        expect(raw.headers['x-content-type-options']).toBe('nosniff');
        expect(raw.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      }
    }
  });

  it("the article page's largest script goes out as brotli at well under half its size", async () => {
    const identity = await rawGet(server.url, script);
    const br = await rawGet(server.url, script, { 'Accept-Encoding': 'gzip, deflate, br, zstd' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.body.byteLength).toBeLessThan(identity.body.byteLength * 0.45);
  });

  it('HEAD answers the same headers as GET for each encoding, without a body', async () => {
    for (const accept of ['br', 'gzip', '']) {
      const get = await rawGet(server.url, '/about', { 'Accept-Encoding': accept });
      const head = await rawGet(server.url, '/about', { 'Accept-Encoding': accept }, 'HEAD');
      expect(head.body.byteLength).toBe(0);
      for (const name of ['content-encoding', 'content-length', 'etag', 'vary', 'content-type'])
        expect(head.headers[name], name).toBe(get.headers[name]);
    }
  });

  it('the twins themselves are not served under their own names', async () => {
    expect(fs.existsSync(path.join(site, 'about/index.html.br'))).toBe(true);
    for (const pathname of ['/about/index.html.br', '/about/index.html.gz', '/rss.xml.gz']) {
      const raw = await rawGet(server.url, pathname);
      expect(raw.status, pathname).toBe(404);
    }
    // A trailing slash names the same file: not served either (Astro redirects to the bare name, a 404).
    for (const pathname of ['/rss.xml.br/', '/about/index.html.gz//'])
      expect((await rawGet(server.url, pathname)).status, pathname).not.toBe(200);
  });
});

describe('negotiation by q-values', () => {
  it.each([
    ['gzip, deflate, br, zstd', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['br;q=0.1, gzip;q=0.8', 'gzip'],
    ['gzip;q=0, br;q=0', undefined],
    ['*', 'br'],
    ['br;q=0, *;q=0.5', 'gzip'],
    ['deflate', undefined],
    ['identity', undefined],
    ['GZIP', 'gzip'],
  ])('Accept-Encoding "%s" gets %s', async (accept, encoding) => {
    const raw = await rawGet(server.url, '/about', { 'Accept-Encoding': accept });
    expect(raw.status).toBe(200);
    expect(raw.headers['content-encoding']).toBe(encoding);
  });
});

describe('validators per encoding', () => {
  it('each encoding has its own ETag, and a 304 needs the validator of the encoding asked for', async () => {
    const tags = new Map<string, string>();
    for (const accept of ['br', 'gzip', 'identity'])
      tags.set(accept, (await rawGet(server.url, '/about', { 'Accept-Encoding': accept })).headers.etag!);
    expect(new Set(tags.values()).size).toBe(3);
    for (const accept of ['br', 'gzip', 'identity']) {
      const current = await rawGet(server.url, '/about', { 'Accept-Encoding': accept, 'If-None-Match': tags.get(accept)! });
      expect(current.status, accept).toBe(304);
      expect(current.body.byteLength).toBe(0);
      expect(current.headers.etag).toBe(tags.get(accept));
      expect(current.headers.vary).toBe('Accept-Encoding');
      expect(current.headers['content-encoding']).toBeUndefined();
    }
    // The identity validator does not stand for the brotli bytes (nor the other way round).
    const other = await rawGet(server.url, '/about', { 'Accept-Encoding': 'br', 'If-None-Match': tags.get('identity')! });
    expect(other.status).toBe(200);
    expect(other.headers['content-encoding']).toBe('br');
    const back = await rawGet(server.url, '/about', { 'Accept-Encoding': 'identity', 'If-None-Match': tags.get('br')! });
    expect(back.status).toBe(200);
    expect(back.headers['content-encoding']).toBeUndefined();
  });
});

describe('twins of pages written while the server runs', () => {
  it("a regenerated page's .br and .gz decode to the new page, on disk and over HTTP", async () => {
    const admin = await adminClient(server);
    const article = await createArticle(admin, { title: 'Compression first take', status: 'published', section: 'world' });
    const page = `/article/${article.slug}`;
    const file = path.join(site, 'article', article.slug, 'index.html');
    await until('the first version', async () =>
      (await rawGet(server.url, page, { 'Accept-Encoding': 'br' })).status === 200 ? true : undefined,
    );
    // Served from memory now; the edit below must replace what the server holds as well as the files.
    const first = await rawGet(server.url, page, { 'Accept-Encoding': 'br' });
    expect(decode(first).toString()).toContain('Compression first take');

    const updated = await admin.put(`/api/articles/${article.id}`, { title: 'Compression second take' });
    expect(updated.status).toBe(200);
    for (const accept of ['br', 'gzip', 'identity']) {
      const body = await until(`the new page as ${accept}`, async () => {
        const raw = await rawGet(server.url, page, { 'Accept-Encoding': accept });
        const text = decode(raw).toString();
        return text.includes('Compression second take') ? raw : undefined;
      });
      expect(body.headers['content-encoding']).toBe(accept === 'identity' ? undefined : accept);
      expect(body.headers.etag).not.toBe(first.headers.etag);
    }
    const identity = fs.readFileSync(file);
    expect(identity.toString()).toContain('Compression second take');
    expect(zlib.brotliDecompressSync(fs.readFileSync(`${file}.br`)).equals(identity)).toBe(true);
    expect(zlib.gunzipSync(fs.readFileSync(`${file}.gz`)).equals(identity)).toBe(true);
    // No temp file is left beside them.
    expect(fs.readdirSync(path.dirname(file)).sort()).toEqual(['index.html', 'index.html.br', 'index.html.gz']);
  });

  it('a deleted page and its twins are gone, and the server no longer answers it from memory', async () => {
    const admin = await adminClient(server);
    const article = await createArticle(admin, { title: 'Short-lived compressed page', status: 'published', section: 'world' });
    const page = `/article/${article.slug}`;
    await until('the page', async () =>
      (await rawGet(server.url, page, { 'Accept-Encoding': 'gzip' })).status === 200 ? true : undefined,
    );
    expect((await admin.delete(`/api/articles/${article.id}`)).status).toBeLessThan(300);
    for (const accept of ['br', 'gzip', '']) {
      await until(`404 as ${accept || 'identity'}`, async () =>
        (await rawGet(server.url, page, { 'Accept-Encoding': accept })).status === 404 ? true : undefined,
      );
    }
    expect(fs.existsSync(path.join(site, 'article', article.slug))).toBe(false);
  });

  it("a folder swapped in behind the server's back is served at once, never with the old twins", async () => {
    const before = await rawGet(server.url, '/careers', { 'Accept-Encoding': 'br' });
    expect(before.headers['content-encoding']).toBe('br');
    // The earlier tests' regeneration (sections, feeds, search bundles) done first, so the copy is of a settled folder.
    await waitForIdleQueue(server.url);
    // What `npm run rebuild` does: a new folder renamed over the served one. Here the new folder's
    // careers page changed but still carries the old twins: they no longer match it and must not be served.
    const staged = `${site}.staged`;
    await copyLiveFolder(site, staged);
    const changed = fs
      .readFileSync(path.join(staged, 'careers/index.html'), 'utf8')
      .replace('</main>', '<p>We are hiring editors.</p></main>');
    fs.writeFileSync(path.join(staged, 'careers/index.html'), changed);
    fs.renameSync(site, `${site}.old`);
    fs.renameSync(staged, site);
    for (const accept of ['br', 'gzip', 'identity']) {
      const raw = await until(
        `the swapped page as ${accept}`,
        async () => {
          const answer = await rawGet(server.url, '/careers', { 'Accept-Encoding': accept });
          return decode(answer).toString().includes('We are hiring editors.') ? answer : undefined;
        },
        3000,
      );
      expect(decode(raw).toString()).toBe(changed);
      expect(raw.headers['content-encoding']).toBeUndefined();
    }
    fs.rmSync(`${site}.old`, { recursive: true, force: true });
  });
});
