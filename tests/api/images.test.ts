/** The image pipeline on the real built server: upload URL, PUT, normalize, the served WebP files, and every refusal. */
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient, startServer, type TestServer } from '../helpers/server.ts';

const APP_SECRET = 'test-secret-for-upload-urls-0123456789abcdef';
let server: TestServer;
let api: ApiClient;
let remote: http.Server;
let remoteUrl: string;
let jpeg: Buffer;
let png: Buffer;

/** A real photo-like image: a colour gradient with some texture, so encoders have work to do. */
function gradient(width: number, height: number): Buffer {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      raw[i] = (x * 255) / width;
      raw[i + 1] = (y * 255) / height;
      raw[i + 2] = ((x ^ y) & 0xff) / 2;
    }
  }
  return raw;
}

const SVG = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><script>alert(1)</script><rect width="100" height="100"/></svg>',
);

beforeAll(async () => {
  // A portrait JPEG with EXIF (orientation 6, camera make): it must come out auto-oriented and stripped.
  jpeg = await sharp(gradient(960, 640), { raw: { width: 960, height: 640, channels: 3 } })
    .jpeg({ quality: 85 })
    .withExifMerge({ IFD0: { Make: 'TestCam' } })
    .withMetadata({ orientation: 6 })
    .toBuffer();
  expect((await sharp(jpeg).metadata()).orientation).toBe(6);
  png = await sharp(gradient(800, 600).reverse(), { raw: { width: 800, height: 600, channels: 3 } })
    .png()
    .toBuffer();
  remote = http.createServer((req, res) => {
    if (req.url === '/photo.png') {
      res.writeHead(200, { 'Content-Type': 'image/png' });
      res.end(png);
    } else if (req.url === '/logo.svg') {
      res.writeHead(200, { 'Content-Type': 'image/svg+xml' });
      res.end(SVG);
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => remote.listen(0, '127.0.0.1', resolve));
  remoteUrl = `http://127.0.0.1:${(remote.address() as { port: number }).port}`;
  server = await startServer({ env: { APP_SECRET } });
  api = new ApiClient(server.url);
  await api.login();
});

afterAll(async () => {
  await server?.stop();
  remote?.closeAllConnections();
  await new Promise((resolve) => remote?.close(resolve));
});

async function uploadUrl(): Promise<string> {
  const response = await api.post('/api/images/upload-url');
  expect(response.status).toBe(200);
  const { uploadURL } = (await response.json()) as { uploadURL: string };
  expect(uploadURL).toMatch(/^\/api\/images\/upload\/[A-Za-z0-9_-]{22,64}\?expires=\d+&sig=[A-Za-z0-9_-]+$/);
  return uploadURL;
}

/** A PUT as the editor's browser sends it: same-origin, no session needed. */
function put(url: string, body: Buffer | string, contentType: string, client = new ApiClient(server.url)): Promise<Response> {
  return client.request('PUT', url, {
    body: typeof body === 'string' ? body : new Uint8Array(body),
    headers: { 'Content-Type': contentType },
  });
}

async function normalize(imageUrl: string): Promise<Response> {
  return api.post('/api/images/normalize', { imageUrl });
}

function uploadsDir(): string[] {
  try {
    return fs.readdirSync(path.join(server.dataDir, 'tmp/uploads'));
  } catch {
    return [];
  }
}

function tokenOf(url: string): string {
  return /\/upload\/([^?]+)/.exec(url)![1]!;
}

describe('upload -> normalize -> served image', () => {
  it('turns a JPEG into 16:9 WebP files at 400/800/1200 px, served with immutable caching', async () => {
    const url = await uploadUrl();
    expect((await put(url, jpeg, 'image/jpeg')).status).toBe(204);
    expect(uploadsDir()).toContain(tokenOf(url));
    const response = await normalize(url);
    expect(response.status).toBe(200);
    const { path: heroPath } = (await response.json()) as { path: string };
    expect(heroPath).toMatch(/^\/images\/[a-f0-9]{32}\/1200\.webp$/);
    // The temp upload is gone once normalised.
    expect(uploadsDir()).not.toContain(tokenOf(url));

    for (const [width, height] of [
      [1200, 675],
      [800, 450],
      [400, 225],
    ] as const) {
      const served = await fetch(new URL(heroPath.replace('1200.webp', `${width}.webp`), server.url));
      expect(served.status).toBe(200);
      expect(served.headers.get('content-type')).toBe('image/webp');
      expect(served.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      const meta = await sharp(Buffer.from(await served.arrayBuffer())).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['webp', width, height]);
      expect(meta.exif).toBeUndefined();
      expect(meta.orientation).toBeUndefined();
    }
    // Auto-oriented: EXIF orientation 6 turns the picture a quarter clockwise, so the source's
    // bottom rows (green high) end up on the left edge and its top rows (green low) on the right.
    const largest = await sharp(fs.readFileSync(path.join(server.dataDir, heroPath)))
      .raw()
      .toBuffer({ resolveWithObject: true });
    const greenAt = (x: number, y: number) => largest.data[(y * largest.info.width + x) * largest.info.channels + 1]!;
    expect(greenAt(5, 337)).toBeGreaterThan(200);
    expect(greenAt(1194, 337)).toBeLessThan(55);
    // The hash names the 1200 px output.
    const file = fs.readFileSync(path.join(server.dataDir, heroPath));
    const { createHash } = await import('node:crypto');
    expect(heroPath).toContain(createHash('sha256').update(file).digest('hex').slice(0, 32));
    // No temp files left beside the images.
    expect(fs.readdirSync(path.dirname(path.join(server.dataDir, heroPath))).sort()).toEqual(['1200.webp', '400.webp', '800.webp']);
  });

  it('gives the same path for the same image twice, and another for a PNG', async () => {
    const paths: string[] = [];
    for (const [body, type] of [
      [jpeg, 'image/jpeg'],
      [jpeg, 'image/jpeg'],
      [png, 'image/png'],
    ] as const) {
      const url = await uploadUrl();
      expect((await put(url, body, type)).status).toBe(204);
      const response = await normalize(url);
      expect(response.status).toBe(200);
      paths.push(((await response.json()) as { path: string }).path);
    }
    expect(paths[0]).toBe(paths[1]);
    expect(paths[2]).not.toBe(paths[0]);
    const served = await fetch(new URL(paths[2]!, server.url));
    expect(served.headers.get('content-type')).toBe('image/webp');
  });

  it('normalizes an http(s) image URL fetched through the safe fetch', async () => {
    const response = await normalize(`${remoteUrl}/photo.png`);
    expect(response.status).toBe(200);
    const { path: fromUrl } = (await response.json()) as { path: string };
    // The same PNG uploaded gives the same path (content-hashed).
    const url = await uploadUrl();
    await put(url, png, 'image/png');
    expect(((await (await normalize(url)).json()) as { path: string }).path).toBe(fromUrl);
    expect((await normalize(`${remoteUrl}/logo.svg`)).status).toBe(415);
    expect((await normalize(`${remoteUrl}/missing.png`)).status).toBe(502);
    expect((await normalize('file:///etc/passwd')).status).toBe(400);
    expect((await normalize('ftp://example.org/a.png')).status).toBe(400);
  });
});

describe('formats', () => {
  it('accepts WebP, AVIF and GIF as well, and refuses TIFF and images over 40 megapixels', async () => {
    const base = sharp(gradient(320, 200), { raw: { width: 320, height: 200, channels: 3 } });
    for (const [body, type] of [
      [await base.clone().webp().toBuffer(), 'image/webp'],
      [await base.clone().avif().toBuffer(), 'image/avif'],
      [await base.clone().gif().toBuffer(), 'image/gif'],
    ] as const) {
      const url = await uploadUrl();
      expect((await put(url, body, type)).status, type).toBe(204);
      const response = await normalize(url);
      expect(response.status, type).toBe(200);
    }
    const tiff = await uploadUrl();
    await put(tiff, await base.clone().tiff().toBuffer(), 'image/tiff');
    expect((await normalize(tiff)).status).toBe(415);
    const huge = await uploadUrl();
    const hugePng = await sharp({ create: { width: 7000, height: 6000, channels: 3, background: '#336699' } })
      .png()
      .toBuffer();
    expect((await put(huge, hugePng, 'image/png')).status).toBe(204);
    const response = await normalize(huge);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(/40 megapixels/);
  });
});

describe('refusals', () => {
  it('needs a session for upload-url and normalize', async () => {
    const anonymous = new ApiClient(server.url);
    expect((await anonymous.post('/api/images/upload-url')).status).toBe(401);
    expect((await anonymous.post('/api/images/normalize', { imageUrl: `${remoteUrl}/photo.png` })).status).toBe(401);
  });

  it('refuses a second PUT to a used URL (410)', async () => {
    const url = await uploadUrl();
    expect((await put(url, png, 'image/png')).status).toBe(204);
    expect((await put(url, jpeg, 'image/jpeg')).status).toBe(410);
  });

  it('refuses non-image uploads: text and SVG by type (415), and disguised ones at normalize (415)', async () => {
    const text = await uploadUrl();
    expect((await put(text, 'hello world', 'text/plain')).status).toBe(415);
    const svg = await uploadUrl();
    expect((await put(svg, SVG, 'image/svg+xml')).status).toBe(415);
    expect(uploadsDir()).not.toContain(tokenOf(text));
    expect(uploadsDir()).not.toContain(tokenOf(svg));

    for (const body of [Buffer.from('this is not an image at all'), SVG, Buffer.from('GIF89a-but-truncated')]) {
      const url = await uploadUrl();
      expect((await put(url, body, 'image/png')).status).toBe(204);
      const response = await normalize(url);
      expect(response.status).toBe(415);
      expect(((await response.json()) as { error: string }).error).toMatch(/only JPEG, PNG, WebP, AVIF and GIF|could not be decoded/);
      expect(uploadsDir()).not.toContain(tokenOf(url));
    }
  });

  it('refuses an upload over 10 MB with 413 and keeps nothing (declared length and streamed body)', async () => {
    const big = Buffer.alloc(10 * 1024 * 1024 + 1, 0xff);
    const declared = await uploadUrl();
    expect((await put(declared, big, 'image/jpeg')).status).toBe(413);
    expect(uploadsDir()).toEqual(expect.not.arrayContaining([tokenOf(declared)]));

    // Chunked, without Content-Length: the cap applies while streaming (10.5 MB, and 16 MB past the adapter's own limit).
    for (const megabytes of [10.5, 16]) {
      const streamed = await uploadUrl();
      const chunk = new Uint8Array(512 * 1024).fill(0xab);
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent >= megabytes * 2) controller.close();
          else {
            sent++;
            controller.enqueue(chunk);
          }
        },
      });
      // Past the adapter's own limit (11 MB) the server answers 413 and cuts the connection while the
      // client is still sending: the client then sees the 413 or, when the cut comes first, a broken pipe.
      const outcome = await fetch(new URL(streamed, server.url), {
        method: 'PUT',
        headers: { 'Content-Type': 'image/jpeg', Origin: server.url },
        body,
        duplex: 'half',
      } as RequestInit).then(
        (response) => response.status,
        (error: Error) => (error.cause as NodeJS.ErrnoException | undefined)?.code ?? error.message,
      );
      if (megabytes > 11) expect([413, 'EPIPE', 'ECONNRESET'], `${megabytes} MB`).toContain(outcome);
      else expect(outcome, `${megabytes} MB`).toBe(413);
      expect(uploadsDir().filter((name) => name.includes(tokenOf(streamed)))).toEqual([]);
    }
    // The server is still fine for the next upload.
    const next = await uploadUrl();
    expect((await put(next, png, 'image/png')).status).toBe(204);
  });

  it('refuses forged (403) and expired (410) upload URLs', async () => {
    const url = await uploadUrl();
    const token = tokenOf(url);
    const tampered = url.replace(/sig=[^&]+/, 'sig=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    expect((await put(tampered, png, 'image/png')).status).toBe(403);
    const later = url.replace(/expires=\d+/, `expires=${Date.now() + 3_600_000}`);
    expect((await put(later, png, 'image/png')).status).toBe(403);
    expect((await put(`/api/images/upload/${token}`, png, 'image/png')).status).toBe(403);

    // Correctly signed with the server's secret, but past its expiry.
    const expires = Date.now() - 1000;
    const sig = createHmac('sha256', APP_SECRET).update(`image-upload\n${token}\n${expires}`).digest('base64url');
    expect((await put(`/api/images/upload/${token}?expires=${expires}&sig=${sig}`, png, 'image/png')).status).toBe(410);
    expect((await normalize(tampered)).status).toBe(403);
  });

  it('refuses a cross-origin PUT even with a valid URL (origin check)', async () => {
    const url = await uploadUrl();
    const response = await fetch(new URL(url, server.url), {
      method: 'PUT',
      headers: { 'Content-Type': 'image/png', Origin: 'https://evil.test' },
      body: new Uint8Array(png),
    });
    expect(response.status).toBe(403);
    // The URL was not consumed by the refused request.
    expect((await put(url, png, 'image/png')).status).toBe(204);
  });

  it('answers 400 when nothing was uploaded to the URL', async () => {
    const url = await uploadUrl();
    expect((await normalize(url)).status).toBe(400);
  });
});
