/** The SSRF policy and the safe fetch, against real local HTTP servers (FETCH_ALLOW_PRIVATE_NETWORKS off unless stated). */
import http from 'node:http';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockedAddressError, checkUrlPolicy, isPublicAddress, publicOnlyLookup } from '../../src/server/net/address-policy.ts';
import { MAX_REDIRECTS, SafeFetchError, safeFetch } from '../../src/server/net/safe-fetch.ts';

let server: http.Server;
let base: string;
const hits: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    hits.push(url);
    if (url === '/ok') {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end(`ua=${req.headers['user-agent']}`);
    } else if (url === '/to-loopback') {
      res.writeHead(302, { Location: `${base}/ok` });
      res.end();
    } else if (url === '/to-metadata') {
      res.writeHead(307, { Location: 'http://169.254.169.254/latest/meta-data/' });
      res.end();
    } else if (url === '/to-file') {
      res.writeHead(301, { Location: 'file:///etc/passwd' });
      res.end();
    } else if (url.startsWith('/chain/')) {
      const n = Number(url.slice('/chain/'.length));
      res.writeHead(302, { Location: n > 0 ? `/chain/${n - 1}` : '/ok' });
      res.end();
    } else if (url === '/gzip' || url === '/br' || url === '/deflate') {
      const body = Buffer.from('<rss>compressed body</rss>');
      const encoded = url === '/gzip' ? zlib.gzipSync(body) : url === '/br' ? zlib.brotliCompressSync(body) : zlib.deflateSync(body);
      res.writeHead(200, { 'Content-Encoding': url.slice(1), 'Content-Type': 'application/xml' });
      res.end(encoded);
    } else if (url === '/bomb') {
      // 64 MB of zeros, gzipped to ~64 KB: the cap applies to the decoded bytes.
      res.writeHead(200, { 'Content-Encoding': 'gzip' });
      res.end(zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024)));
    } else if (url === '/big') {
      res.writeHead(200, { 'Content-Length': String(2 * 1024 * 1024) });
      res.end(Buffer.alloc(2 * 1024 * 1024));
    } else if (url === '/big-chunked') {
      res.writeHead(200);
      for (let i = 0; i < 32; i++) res.write(Buffer.alloc(64 * 1024));
      res.end();
    } else if (url === '/slow') {
      res.writeHead(200);
      res.write('start');
      // Never ends: the deadline must cut it off.
    } else if (url === '/status/429') {
      res.writeHead(429, { 'Retry-After': '120' });
      res.end('slow down');
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const strict = { allowPrivateNetworks: false, maxBytes: 1024 * 1024 } as const;

async function refusal(url: string, options: Parameters<typeof safeFetch>[1] = strict): Promise<SafeFetchError> {
  const error = await safeFetch(url, options).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `${url} must be refused`).toBeInstanceOf(SafeFetchError);
  return error as SafeFetchError;
}

describe('the SSRF matrix with FETCH_ALLOW_PRIVATE_NETWORKS off', () => {
  const blocked = [
    'http://127.0.0.1/',
    'http://127.0.0.1:1/',
    'http://10.0.0.1/',
    'http://172.16.5.4/',
    'http://192.168.1.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://100.64.0.1/',
    'http://100.100.100.200/',
    'http://0.0.0.0/',
    'http://224.0.0.1/',
    'http://255.255.255.255/',
    'http://[::1]/',
    'http://[::]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:169.254.169.254]/',
    'http://[0:0:0:0:0:ffff:7f00:1]/',
    'http://[::127.0.0.1]/',
    'http://[fe80::1]/',
    'http://[fc00::1]/',
    'http://[fd00:ec2::254]/',
    'http://[64:ff9b::7f00:1]/',
    'http://[2002:7f00:1::]/',
    'http://0x7f000001/',
    'http://0x7f.0.0.1/',
    'http://2130706433/',
    'http://0177.0.0.1/',
    'http://017700000001/',
    'http://127.1/',
    'http://127.0.0.1./',
    'http://localhost/',
    'http://localhost:8080/',
    'http://LOCALHOST./',
    'http://foo.localhost/',
    'http://printer.local/',
    'http://metadata.google.internal/',
    'http://intranet/',
  ];
  for (const url of blocked) {
    it(`refuses ${url}`, async () => {
      const before = hits.length;
      const error = await refusal(url);
      expect(error.code).toBe('blocked');
      expect(hits.length).toBe(before);
    });
  }

  for (const url of [
    'file:///etc/passwd',
    'ftp://example.com/feed.xml',
    'data:text/plain,hello',
    'gopher://127.0.0.1:70/',
    'http://user:pass@example.com/',
  ]) {
    it(`refuses ${url.split(':')[0]} URLs (${url})`, async () => {
      const error = await refusal(url);
      expect(error.code).toBe('blocked');
    });
  }

  it('refuses the loopback test server itself', async () => {
    const error = await refusal(`${base}/ok`);
    expect(error.code).toBe('blocked');
    expect(hits).not.toContain('/ok');
  });

  it('checks every redirect hop: an allowed first hop redirecting to 127.0.0.1 is refused before the second request', async () => {
    const before = hits.filter((h) => h === '/ok').length;
    // The first hop is the local test server (allowed for this hop only, a test-only option); the redirect target is not.
    const error = await refusal(`${base}/to-loopback`, { ...strict, allowPrivateFirstHop: true });
    expect(error.code).toBe('blocked');
    expect(error.message).toMatch(/127\.0\.0\.1 is not a public address/);
    expect(hits).toContain('/to-loopback');
    expect(hits.filter((h) => h === '/ok').length).toBe(before);
  });

  it('refuses redirects to the metadata address and to file: URLs', async () => {
    expect((await refusal(`${base}/to-metadata`, { ...strict, allowPrivateFirstHop: true })).code).toBe('blocked');
    expect((await refusal(`${base}/to-file`, { ...strict, allowPrivateFirstHop: true })).message).toMatch(/Only http and https/);
  });

  it('resolves host names itself and refuses any that resolve to a private address (connect-time check)', async () => {
    const result = await new Promise<{ error: unknown }>((resolve) => {
      publicOnlyLookup('localhost', { all: true }, (error) => resolve({ error }));
    });
    expect(result.error).toBeInstanceOf(BlockedAddressError);
    expect((result.error as Error).message).toMatch(/localhost resolves to (127\.0\.0\.1|::1)/);
  });
});

describe('isPublicAddress and checkUrlPolicy', () => {
  it('accepts public unicast addresses', () => {
    for (const ip of ['8.8.8.8', '93.184.216.34', '2606:4700:4700::1111', '[2a00:1450:4001:82a::200e]'])
      expect(isPublicAddress(ip), ip).toBe(true);
    for (const ip of ['127.0.0.1', '10.1.2.3', '::1', '::ffff:10.0.0.1', 'not-an-ip', '192.0.2.10', '198.18.0.1'])
      expect(isPublicAddress(ip), ip).toBe(false);
  });

  it('lifts the address rule (never the scheme rule) with allowPrivate', () => {
    expect(checkUrlPolicy(new URL('http://127.0.0.1/'), { allowPrivate: true })).toBeUndefined();
    expect(checkUrlPolicy(new URL('file:///etc/passwd'), { allowPrivate: true })).toMatch(/Only http and https/);
    expect(checkUrlPolicy(new URL('https://news.example.org/feed'), { allowPrivate: false })).toBeUndefined();
  });
});

describe('safeFetch with FETCH_ALLOW_PRIVATE_NETWORKS on (the test servers are local)', () => {
  const open = { allowPrivateNetworks: true, maxBytes: 1024 * 1024 } as const;

  it('sends a clear User-Agent and answers the body', async () => {
    const response = await safeFetch(`${base}/ok`, { ...open, userAgent: 'MeridianNews/0.1 (+http://test)' });
    expect(response.status).toBe(200);
    expect(response.body.toString()).toBe('ua=MeridianNews/0.1 (+http://test)');
  });

  it('follows up to 5 redirects and refuses a sixth', async () => {
    const ok = await safeFetch(`${base}/chain/${MAX_REDIRECTS - 1}`, open);
    expect(ok.url).toBe(`${base}/ok`);
    const error = await refusal(`${base}/chain/${MAX_REDIRECTS}`, open);
    expect(error.code).toBe('redirects');
  });

  for (const encoding of ['gzip', 'br', 'deflate']) {
    it(`decodes ${encoding}`, async () => {
      const response = await safeFetch(`${base}/${encoding}`, open);
      expect(response.body.toString()).toBe('<rss>compressed body</rss>');
    });
  }

  it('caps the decoded size (declared, streamed and decompression bombs)', async () => {
    for (const path of ['/big', '/big-chunked', '/bomb']) {
      const error = await refusal(`${base}${path}`, open);
      expect(error.code, path).toBe('too-large');
      expect(error.message).toBe('The response is larger than 1 MB');
    }
  });

  it('gives up after the timeout', async () => {
    const started = Date.now();
    const error = await refusal(`${base}/slow`, { ...open, timeoutMs: 500 });
    expect(error.code).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('answers non-2xx statuses with their headers and an empty body', async () => {
    const response = await safeFetch(`${base}/status/429`, open);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('120');
    expect(response.body.length).toBe(0);
  });

  it('names an unreachable host', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await refusal(`http://127.0.0.1:${port}/`, open);
    expect(error.code).toBe('network');
    expect(error.message).toMatch(/refused the connection/);
  });
});
