/**
 * One real server with Debian's nginx in front, running deploy/nginx.conf: nginx serves the built
 * pages, assets and uploaded images from disk and hands everything else to the server. Every answer
 * nginx gives is compared with the server's own for the same request (status, the headers readers and
 * caches act on, the decoded body), and the answers nginx must serve from disk are checked to come from
 * disk (nginx's ETag), those it must leave to the server to come from the server.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient, type TestServer } from '../helpers/server.ts';
import { startFront, type RunningNginx } from '../helpers/nginx.ts';
import { SECURITY_HEADERS } from '../../src/api/node-server.ts';
import type { Article } from '../../src/schemas/article.ts';
import { createArticle, startApiServer, TestClient, waitFor } from './support.ts';

/**
 * Until the server's queue has stayed empty for a second: a written page queues its search bundle only
 * once it is written, so one empty reading can fall between the two.
 */
async function settled(server: TestServer): Promise<void> {
  let emptySince: number | undefined;
  await waitFor('the regeneration queue to stay empty', async () => {
    const { jobs } = (await (await fetch(`${server.url}/api/health`)).json()) as { jobs: number };
    if (jobs > 0) emptySince = undefined;
    else emptySince ??= Date.now();
    return emptySince !== undefined && Date.now() - emptySince >= 1000;
  });
}

type Answer = { status: number; headers: http.IncomingHttpHeaders; raw: Buffer; body: Buffer };

/**
 * One request as written, over node:http: the path goes out unnormalised (dot segments, encoded dots)
 * and only the headers given are sent (fetch would add an Accept-Encoding and decode the body itself).
 */
function request(base: string, method: string, rawPath: string, headers: Record<string, string> = {}): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path: rawPath, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        const encoding = raw.byteLength === 0 ? undefined : res.headers['content-encoding'];
        try {
          const body = encoding === 'br' ? zlib.brotliDecompressSync(raw) : encoding === 'gzip' ? zlib.gunzipSync(raw) : raw;
          resolve({ status: res.statusCode!, headers: res.headers, raw, body });
        } catch (error) {
          reject(error as Error);
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** nginx's ETag for a file it sent ("mtime-size" in hex); the server's are content hashes, or W/ from `send` for images. */
const NGINX_ETAG = /^"[0-9a-f]+-[0-9a-f]+"$/;

/** Headers compared between the two answers: what browsers, caches and crawlers act on. */
const COMPARED = [
  'content-type',
  'content-encoding',
  'content-length',
  'cache-control',
  'vary',
  'location',
  'accept-ranges',
  ...Object.keys(SECURITY_HEADERS).map((name) => name.toLowerCase()),
];

/**
 * The part of an answer that must be the same at nginx and at the server (validators: present or not).
 * A body may name the address it was asked at (Astro's redirect page does): that address is blanked.
 */
function comparable(answer: Answer, origin: string) {
  const body = Buffer.from(answer.body.toString('latin1').replaceAll(origin, '<origin>'), 'latin1');
  return {
    status: answer.status,
    headers: Object.fromEntries(COMPARED.map((name) => [name, answer.headers[name]])),
    validators: { etag: answer.headers.etag !== undefined, lastModified: answer.headers['last-modified'] !== undefined },
    body: { bytes: body.byteLength, sha256: createHash('sha256').update(body).digest('hex') },
  };
}

const ENCODINGS: (string | undefined)[] = [undefined, 'gzip', 'br', 'gzip, deflate, br'];

describe('one server behind nginx (deploy/nginx.conf)', () => {
  let server: TestServer;
  let front: RunningNginx;
  let admin: TestClient;
  let article: Article;
  let imagePath: string;
  let asset: { js: string; css: string; font: string };
  let pagefind: { periods: string; entry: string; meta: string; script: string };

  beforeAll(async () => {
    server = await startApiServer({ REGENERATION_SETTLE_MS: '0' });
    // nginx's workers run as an unprivileged user (nobody, when started as root): they may pass through
    // DATA_DIR to its images/ but not list or read the store beside them (mkdtemp made it 0700).
    fs.chmodSync(server.dataDir, 0o711);
    front = await startFront({ serveDir: server.clientDir, dataDir: server.dataDir, serverPort: Number(new URL(server.url).port) });
    // Every write below goes through nginx: a session, origin checks and uploads that work there work behind it.
    admin = new TestClient(front.url);
    await admin.login();
    article = await createArticle(admin, { title: 'Harbour lights return', section: 'world', status: 'published' });
    // A second listing page needs more than one page of cards (12) in a section.
    for (let i = 0; i < 26; i++) await createArticle(admin, { title: `Chip plant update ${i}`, section: 'tech', status: 'published' });
    const png = await sharp({ create: { width: 640, height: 360, channels: 3, background: { r: 30, g: 90, b: 200 } } })
      .png()
      .toBuffer();
    const { uploadURL } = (await (await admin.post('/api/images/upload-url')).json()) as { uploadURL: string };
    const put = await new ApiClient(front.url).request('PUT', uploadURL, {
      body: new Uint8Array(png),
      headers: { 'Content-Type': 'image/png' },
    });
    expect(put.status).toBe(204);
    const normalized = await admin.post('/api/images/normalize', { imageUrl: uploadURL });
    expect(normalized.status, await normalized.clone().text()).toBe(200);
    imagePath = ((await normalized.json()) as { path: string }).path;

    const client = server.clientDir;
    await settled(server);
    for (const file of [`article/${article.slug}/index.html`, 'section/tech/page/2/index.html', 'pagefind/periods.json'])
      expect(fs.existsSync(path.join(client, file)), file).toBe(true);
    const astro = fs.readdirSync(path.join(client, '_astro'));
    const fonts = fs.readdirSync(path.join(client, '_astro/fonts'));
    asset = {
      js: `/_astro/${astro.find((f) => f.endsWith('.js'))!}`,
      css: `/_astro/${astro.find((f) => f.endsWith('.css'))!}`,
      font: `/_astro/fonts/${fonts.find((f) => f.endsWith('.woff2'))!}`,
    };
    const { periods } = JSON.parse(fs.readFileSync(path.join(client, 'pagefind/periods.json'), 'utf8')) as { periods: string[] };
    const bundle = `/pagefind/${periods[0]!}`;
    const bundleFiles = fs.readdirSync(path.join(client, bundle));
    pagefind = {
      periods: '/pagefind/periods.json',
      entry: `${bundle}/pagefind-entry.json`,
      meta: `${bundle}/${bundleFiles.find((f) => f.endsWith('.pf_meta'))!}`,
      script: `${bundle}/pagefind.js`,
    };
    // Files the server never serves from disk, planted where nginx would find them if a rule were missing.
    fs.writeFileSync(path.join(client, '.hidden.txt'), 'a dot file');
    fs.writeFileSync(path.join(client, 'section', '.tmp-page.html'), '<p>half written</p>');
    fs.mkdirSync(path.join(client, 'api'), { recursive: true });
    fs.writeFileSync(path.join(client, 'api', 'decoy.json'), '{"served":"from disk"}');
    fs.mkdirSync(path.join(client, 'images'), { recursive: true });
    fs.copyFileSync(path.join(server.dataDir, imagePath), path.join(client, 'images', 'decoy.webp'));
    fs.writeFileSync(path.join(server.dataDir, 'images', 'notes.txt'), 'not an image');
    // ... and one it does serve: /.well-known is the one dot folder that is public.
    fs.mkdirSync(path.join(client, '.well-known'), { recursive: true });
    fs.writeFileSync(path.join(client, '.well-known', 'security.txt'), 'Contact: mailto:security@example.com\n');
  }, 240_000);

  afterAll(async () => {
    await front?.stop();
    await server?.stop();
  });

  /** Asserts nginx answers `rawPath` as the server does, for every Accept-Encoding; answers nginx's answers. */
  async function expectSameAnswers(
    method: string,
    rawPath: string,
    by: 'nginx' | 'server',
    encodings: (string | undefined)[] = ENCODINGS,
    extra: Record<string, string> = {},
  ): Promise<Answer[]> {
    const answers: Answer[] = [];
    for (const encoding of encodings) {
      const headers = { ...extra, ...(encoding === undefined ? {} : { 'Accept-Encoding': encoding }) };
      const label = `${method} ${rawPath} (Accept-Encoding: ${encoding ?? 'none'})`;
      // Each asks with its own address as Origin, as a browser on that address would.
      const direct = await request(server.url, method, rawPath, { ...headers, ...(method === 'POST' ? { Origin: server.url } : {}) });
      const viaNginx = await request(front.url, method, rawPath, { ...headers, ...(method === 'POST' ? { Origin: front.url } : {}) });
      expect(comparable(viaNginx, front.url), label).toEqual(comparable(direct, server.url));
      // Which side answered: nginx's own validator on a file it sent, never on one the server answered.
      const etag = viaNginx.headers.etag ?? '';
      if (by === 'nginx') expect(etag, `${label}: sent by nginx from disk`).toMatch(NGINX_ETAG);
      else expect(etag, `${label}: answered by the server`).not.toMatch(NGINX_ETAG);
      answers.push(viaNginx);
    }
    return answers;
  }

  it('serves pages, feeds, sitemaps, assets and the search index from disk exactly as the server does', async () => {
    const paths = [
      `/article/${article.slug}`,
      `/article/${article.slug}/`,
      '/section/world',
      '/section/tech',
      '/section/tech/page/2',
      '/section/%74ech?utm_source=feed',
      '/rss.xml',
      '/section/tech/rss.xml',
      '/sitemap.xml',
      '/news-sitemap.xml',
      asset.js,
      asset.css,
      asset.font,
      pagefind.periods,
      pagefind.entry,
      pagefind.meta,
      pagefind.script,
      '/favicon.svg',
      '/robots.txt',
      // The same file at the server: not a folder to look in.
      '/robots.txt/',
      '/brand/default-hero.webp',
      '/404.html',
      '/.well-known/security.txt',
    ];
    for (const rawPath of paths) {
      const answers = await expectSameAnswers('GET', rawPath, 'nginx');
      expect(answers[0]!.status, rawPath).toBe(200);
    }
    // The twins are the ones negotiated: brotli where it is accepted, gzip where only gzip is.
    const rss = await expectSameAnswers('GET', '/rss.xml', 'nginx');
    expect(rss.map((a) => a.headers['content-encoding'])).toEqual([undefined, 'gzip', 'br', 'br']);
    // HEAD: the same headers, no body.
    for (const rawPath of [`/article/${article.slug}`, '/rss.xml', asset.js, '/section/tech/page/2'])
      for (const answer of await expectSameAnswers('HEAD', rawPath, 'nginx')) expect(answer.raw.byteLength).toBe(0);
  });

  it('serves uploaded images from DATA_DIR/images as the server does, and only raster images', async () => {
    const [image] = await expectSameAnswers('GET', imagePath, 'nginx');
    expect(image!.status).toBe(200);
    expect(image!.headers['content-type']).toBe('image/webp');
    expect(image!.headers['content-security-policy']).toBe("default-src 'none'; sandbox; frame-ancestors 'none'");
    expect(image!.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    await expectSameAnswers('HEAD', imagePath, 'nginx');
    // Not a raster image, missing, or not in DATA_DIR/images (a file of that name in the served folder): the server's 404.
    for (const rawPath of ['/images/notes.txt', '/images/0123456789abcdef0123456789abcdef/1200.webp', '/images/decoy.webp']) {
      const [answer] = await expectSameAnswers('GET', rawPath, 'server');
      expect(answer!.status, rawPath).toBe(404);
    }
  });

  it('leaves to the server what it answers itself: /, missing pages, the API, twins by name, dot segments, writes, q-values', async () => {
    const cases: [string, string, number][] = [
      ['GET', '/', 302],
      ['HEAD', '/', 302],
      ['GET', '/no-such-page', 404],
      ['GET', '/article/no-such-article', 404],
      ['GET', '/section', 404],
      ['GET', '/section/', 301],
      ['GET', '/api/decoy.json', 404],
      ['GET', '/rss.xml.br', 404],
      ['GET', '/rss.xml.gz', 404],
      ['GET', '/rss.xml.br/', 301],
      ['GET', '/.hidden.txt', 404],
      ['GET', '/section/.tmp-page.html', 404],
      ['GET', '/section/../robots.txt', 404],
      ['GET', '/section/%2e%2E/robots.txt', 404],
      ['GET', '/./robots.txt', 404],
      ['GET', `/article/${article.slug}/.`, 301],
      ['POST', '/section/world', 404],
      ['POST', `/article/${article.slug}`, 404],
      ['PUT', '/robots.txt', 404],
    ];
    for (const [method, rawPath, status] of cases) {
      const [answer] = await expectSameAnswers(method, rawPath, 'server');
      expect(answer!.status, `${method} ${rawPath}`).toBe(status);
    }
    // An Accept-Encoding with q-values or "*" is weighed by the server (brotli_static would send br for the first).
    const weighed = await expectSameAnswers('GET', '/rss.xml', 'server', [
      'gzip;q=0.9, br;q=0.8',
      'br;q=0, gzip',
      '*',
      'identity;q=1, br;q=0',
    ]);
    expect(weighed.map((a) => a.headers['content-encoding'])).toEqual(['gzip', 'gzip', 'br', undefined]);
  });

  it('answers a conditional GET with the ETag it gave with 304 and the same headers', async () => {
    for (const encoding of ENCODINGS) {
      const headers: Record<string, string> = encoding === undefined ? {} : { 'Accept-Encoding': encoding };
      const first = await request(front.url, 'GET', `/article/${article.slug}`, headers);
      const etag = first.headers.etag!;
      expect(etag).toMatch(NGINX_ETAG);
      const again = await request(front.url, 'GET', `/article/${article.slug}`, { ...headers, 'If-None-Match': etag });
      expect(again.status, encoding).toBe(304);
      expect(again.raw.byteLength).toBe(0);
      for (const name of ['cache-control', 'vary', ...Object.keys(SECURITY_HEADERS).map((n) => n.toLowerCase())])
        expect(again.headers[name], name).toBe(first.headers[name]);
      // A stale validator gets the page.
      expect((await request(front.url, 'GET', `/article/${article.slug}`, { ...headers, 'If-None-Match': '"0-0"' })).status).toBe(200);
    }
  });

  it('a write through nginx reaches the server, and nginx serves the page the worker rewrote', async () => {
    // A cross-site write is still refused behind nginx: the server sees the Host readers used.
    const foreign = await new TestClient(front.url).request('POST', '/api/auth/login', {
      json: { username: 'admin', password: 'wrong' },
      headers: { Origin: 'https://elsewhere.example' },
    });
    expect(foreign.status).toBe(403);
    await foreign.body?.cancel();
    const title = 'Harbour lights return for good';
    const saved = await admin.put(`/api/articles/${article.id}`, { title });
    expect(saved.status, await saved.clone().text()).toBe(200);
    const page = `/article/${article.slug}`;
    await waitFor('the edited page from nginx', async () =>
      (await request(front.url, 'GET', page, { 'Accept-Encoding': 'br' })).body.toString().includes(title),
    );
    // Every twin and the plain file are the new page, at nginx and at the server alike.
    await settled(server);
    for (const answer of await expectSameAnswers('GET', page, 'nginx')) expect(answer.body.toString()).toContain(title);
  });

  it('hands a request to the server while the served folder is swapped out, and serves from disk again after', async () => {
    // Nothing may be written into the folder while it is away (a page job would make a new one).
    await settled(server);
    const away = `${server.clientDir}-away`;
    fs.renameSync(server.clientDir, away);
    try {
      // nginx finds nothing: the server answers (after its wait for the folder), as it would directly.
      await expectSameAnswers('GET', '/robots.txt', 'server', [undefined]);
    } finally {
      fs.renameSync(away, server.clientDir);
    }
    await expectSameAnswers('GET', '/robots.txt', 'nginx', [undefined]);
  });
});
