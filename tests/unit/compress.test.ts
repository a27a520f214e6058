/** Compressed twins made once for a body written again unchanged (Pagefind's script files in every bundle). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { compressBody, compressTree, reusingTwins, type Compressor } from '../../src/server/publishing/compress.ts';

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
    // Outside /pagefind/ and /_astro/ a file gets quality 5, so its twins differ.
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
