/** Compression tiers by page, and twins made once for a body written again unchanged (Pagefind's script files in every bundle). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ARCHIVE_AFTER_MS,
  COMPRESSION_LEVELS,
  compressBody,
  compressBodySync,
  compressionTier,
  compressTree,
  reusingTwins,
  type Compressor,
} from '../../src/server/publishing/compress.ts';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'meridian-compress-'));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

/** compressBody, counting the bodies it was asked to compress. */
function counted(): { compress: Compressor; calls: string[] } {
  const calls: string[] = [];
  return { calls, compress: (file, body) => (calls.push(path.basename(file)), compressBody(file, body)) };
}

const script = (n: number) =>
  Buffer.from(`export function search${n}(q) { return fetch('/pagefind/' + q).then((r) => r.json()); }\n`.repeat(40));

describe('reusingTwins', () => {
  it('compresses a body once and hands the same twins out again, which decode to it', async () => {
    const { compress, calls } = counted();
    const reuse = reusingTwins(compress);
    const first = await reuse('/site/pagefind/a/pagefind.js', script(1));
    const again = await reuse('/site/pagefind/b/pagefind.js', script(1));
    expect(calls).toEqual(['pagefind.js']);
    expect(again).toBe(first);
    expect(zlib.brotliDecompressSync(again.br!)).toEqual(script(1));
    expect(zlib.gunzipSync(again.gzip!)).toEqual(script(1));
  });

  it('compresses again for another body, or the same body at another brotli quality', async () => {
    const { compress, calls } = counted();
    const reuse = reusingTwins(compress);
    await reuse('/site/pagefind/a/pagefind.js', script(1));
    await reuse('/site/pagefind/a/pagefind.js', script(2));
    // Outside /pagefind/ and /_astro/ a file is compressed at another level, so its twins differ.
    await reuse('/site/article/x/index.js', script(1));
    expect(calls).toHaveLength(3);
  });

  it('keeps only the last bodies it was given, and none too small to compress', async () => {
    const { compress, calls } = counted();
    const reuse = reusingTwins(compress, 2);
    for (const n of [1, 2, 3, 1]) await reuse('/site/pagefind/a/pagefind.js', script(n));
    expect(calls).toHaveLength(4);
    expect(await reuse('/site/pagefind/a/pagefind-entry.json', Buffer.from('{"version":"1"}'))).toEqual({});
    expect(calls).toHaveLength(4);
  });

  it('writes the same twins through compressTree into each folder it is given', async () => {
    const { compress, calls } = counted();
    const reuse = reusingTwins(compress);
    for (const bundle of ['one', 'two']) {
      const dir = path.join(work, 'pagefind', bundle);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'pagefind.js'), script(7));
      await compressTree(dir, { compress: reuse });
      expect(zlib.brotliDecompressSync(fs.readFileSync(path.join(dir, 'pagefind.js.br')))).toEqual(script(7));
      expect(zlib.gunzipSync(fs.readFileSync(path.join(dir, 'pagefind.js.gz')))).toEqual(script(7));
    }
    expect(calls).toEqual(['pagefind.js']);
  });
});

describe('compression tiers', () => {
  const now = Date.parse('2026-12-02T12:00:00Z');
  const words = ['council', 'budget', 'harbour', 'vote', 'school', 'river', 'housing', 'tram', 'mayor', 'energy', 'market', 'storm'];
  // Text that varies as prose does, so that the levels make different bytes (a repeated line does not).
  const paragraphs = Array.from(
    { length: 300 },
    (_, i) => `<p>${Array.from({ length: 12 }, (_, j) => words[(i * 7 + j * j * 3 + i * j) % words.length]).join(' ')} ${i * 37}.</p>`,
  ).join('\n');
  /** An article page as the site draws it: the publication time in its head, then a body worth compressing. */
  const articlePage = (published: string) =>
    Buffer.from(
      `<!doctype html><html><head><meta property="article:published_time" content="${published}"></head><body>${paragraphs}</body></html>`,
    );
  const fresh = articlePage(new Date(now - ARCHIVE_AFTER_MS + 60_000).toISOString());
  const old = articlePage(new Date(now - ARCHIVE_AFTER_MS - 60_000).toISOString());

  it('names each kind of served file', () => {
    const page = Buffer.from('<html></html>');
    expect(compressionTier('/srv/site/_astro/index.Bx1.js', page, now)).toBe('asset');
    expect(compressionTier('/srv/site/pagefind/2026-11/pagefind.js', page, now)).toBe('asset');
    expect(compressionTier('/srv/site/section/world/index.html', page, now)).toBe('front');
    expect(compressionTier('/srv/site/section/world/page/2/index.html', page, now)).toBe('archive');
    expect(compressionTier('/srv/site/tag/climate/page/12/index.html', page, now)).toBe('archive');
    expect(compressionTier('/srv/site/author/ada/page/3/index.html', page, now)).toBe('archive');
    expect(compressionTier('/srv/site/tag/climate/index.html', page, now)).toBe('current');
    expect(compressionTier('/srv/site/about/index.html', page, now)).toBe('current');
    expect(compressionTier('/srv/site/section/world/rss.xml', page, now)).toBe('current');
    expect(compressionTier('/srv/site/section/world/page/2/cards.json', page, now)).toBe('current');
  });

  it('keeps a story of the last week current and moves an older one to the archive', () => {
    expect(compressionTier('/srv/site/article/fresh/index.html', fresh, now)).toBe('current');
    expect(compressionTier('/srv/site/article/old/index.html', old, now)).toBe('archive');
    // A page without a readable publication time is not guessed old.
    expect(compressionTier('/srv/site/article/x/index.html', articlePage('soon'), now)).toBe('current');
  });

  it("makes each tier's twins at its levels, on the render thread and in libuv's pool alike", async () => {
    const cases = [
      { file: path.join(work, 'section/world/index.html'), body: fresh, tier: 'front' },
      { file: path.join(work, 'article/recent/index.html'), body: articlePage(new Date().toISOString()), tier: 'current' },
      { file: path.join(work, 'article/old/index.html'), body: old, tier: 'archive' },
    ] as const;
    for (const { file, body, tier } of cases) {
      const levels = COMPRESSION_LEVELS[tier];
      const br = zlib.brotliCompressSync(body, {
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: levels.brotli,
          [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength,
        },
      });
      const gzip = zlib.gzipSync(body, { level: levels.gzip });
      expect(await compressBody(file, body), tier).toEqual({ br, gzip });
      expect(compressBodySync(file, body).twins, tier).toEqual({ br, gzip });
    }
    // The tiers differ where it counts: the archive's twins are bigger than the front's for one body.
    const front = await compressBody(path.join(work, 'section/world/index.html'), old);
    const archive = await compressBody(path.join(work, 'article/old/index.html'), old);
    expect(archive.br!.byteLength).toBeGreaterThan(front.br!.byteLength);
    expect(archive.gzip!.byteLength).toBeGreaterThan(front.gzip!.byteLength);
  });
});
