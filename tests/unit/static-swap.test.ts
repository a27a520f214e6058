/** The static file lookup across `npm run rebuild --full`'s swap: between its two renames the served folder is missing for a moment. */
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { resolveStaticFile } from '../../src/api/node-server.ts';
import { makeTempDir } from './support.ts';

describe('resolveStaticFile during a swap of the served folder', () => {
  it('finds a page whose folder is renamed back in while it looks, instead of answering a 404', async () => {
    const root = makeTempDir();
    const client = path.join(root, 'client');
    const away = path.join(root, '.old-client');
    fs.mkdirSync(client);
    fs.writeFileSync(path.join(client, 'sitemap.xml'), '<sitemapindex/>');
    fs.renameSync(client, away);
    // The second rename of the swap, from another thread 20 ms into the lookup.
    const worker = new Worker(
      `const { parentPort } = require('node:worker_threads'); const fs = require('node:fs');
       parentPort.once('message', () => {
         Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
         fs.renameSync(${JSON.stringify(away)}, ${JSON.stringify(client)});
       });`,
      { eval: true },
    );
    await once(worker, 'online');
    worker.postMessage('go');
    // A budget far past the product's 50 ms, so a loaded machine that schedules the other thread
    // late cannot fail the test (it did once in CI); without the wait the lookup answers at once.
    expect(resolveStaticFile(client, '/sitemap.xml', 10_000)).toBe(path.join(client, 'sitemap.xml'));
    await worker.terminate();
  });

  it('still answers undefined at once for a file that is not there while the folder is', () => {
    const client = makeTempDir();
    expect(resolveStaticFile(client, '/missing.xml')).toBeUndefined();
  });
});
