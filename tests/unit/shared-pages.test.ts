/**
 * Copying what one server stored into another server's folders (two PostgreSQL stores on one
 * database, as two servers): pages and removals, the seed's hero images, and notes heard live.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { openStore, type Store } from '../../src/store/index.ts';
import type { Runtime } from '../../src/server/runtime.ts';
import { seedDemoContent } from '../../src/server/seed.ts';
import { followStoredPages, SEQ_OVERLAP, syncStoredPages } from '../../src/server/publishing/shared-pages.ts';
import { databaseFor } from '../helpers/postgres.ts';
import { closeQuietly, makeTempDir, quietObservability } from './support.ts';

const opened: Store[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await closeQuietly(store);
});

/** A runtime of one "server": its own DATA_DIR and served folder, the shared database. */
async function server(databaseUrl: string): Promise<Runtime & { folders: { clientDir: string; imagesDir: string } }> {
  const dataDir = makeTempDir('meridian-shared-');
  const store = await openStore(dataDir, 'write', { databaseUrl });
  opened.push(store);
  return {
    config: parseConfig({ DATA_DIR: dataDir, SEED: 'none', DATABASE_URL: databaseUrl }),
    store,
    hooks: { articlesChanged: [], writesInFlight: 0 },
    services: new Map(),
    ...quietObservability(),
    folders: { clientDir: makeTempDir('meridian-site-'), imagesDir: path.join(dataDir, 'images') },
  };
}

const html = (text: string) => new TextEncoder().encode(`<!DOCTYPE html><p>${text}</p>`);

describe('stored pages copied between servers', () => {
  it('copies pages and removals a server missed, and only what differs', async () => {
    const url = await databaseFor(makeTempDir('meridian-shared-db-'));
    const [a, b] = [await server(url), await server(url)];
    await a.store.pages.put('/article/kept', html('kept'), 'a');
    await a.store.pages.put('/article/gone', html('gone'), 'a');
    expect(await syncStoredPages(b.store, b.folders)).toMatchObject({ checked: 2, written: 2, deleted: 0 });
    const file = (slug: string) => path.join(b.folders.clientDir, 'article', slug, 'index.html');
    expect(fs.readFileSync(file('kept'), 'utf8')).toContain('kept');
    await a.store.pages.put('/article/gone', undefined, 'a');
    // Never a path outside the served pages, whatever a row says.
    await a.store.pages.put('/../../escape', html('no'), 'a');
    expect(await syncStoredPages(b.store, b.folders)).toMatchObject({ checked: 2, written: 0, deleted: 1 });
    expect(fs.existsSync(file('gone'))).toBe(false);
    expect(fs.existsSync(file('kept'))).toBe(true);
  });

  it('copies a page another server stores while this one listens, and skips its own', async () => {
    const url = await databaseFor(makeTempDir('meridian-shared-db-'));
    const [a, b] = [await server(url), await server(url)];
    const applied: string[] = [];
    const searchJobs: string[] = [];
    const stop = await followStoredPages(b.store, b.folders, {
      owner: 'b',
      onSearchJob: (jobPath) => searchJobs.push(jobPath),
      onApplied: (publicPath, outcome) => applied.push(`${publicPath} ${outcome}`),
      log: () => {},
    });
    try {
      await b.store.pages.put('/section/world', html('mine'), 'b');
      await a.store.pages.put('/article/live', html('live'), 'a');
      await a.store.pages.put('/pagefind/head-2025-01-01', undefined, 'a');
      for (let i = 0; i < 300 && (applied.length < 1 || searchJobs.length < 1); i++)
        await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      await stop();
    }
    expect(applied).toEqual(['/article/live written']);
    expect(searchJobs).toEqual(['/pagefind/head-2025-01-01']);
    expect(fs.readFileSync(path.join(b.folders.clientDir, 'article/live/index.html'), 'utf8')).toContain('live');
    expect(fs.existsSync(path.join(b.folders.clientDir, 'section/world/index.html'))).toBe(false);
  });

  it('after the sync before serving, the sync after LISTEN checks only later pages (and applies them)', async () => {
    const url = await databaseFor(makeTempDir('meridian-shared-db-'));
    const [a, b] = [await server(url), await server(url)];
    const many = SEQ_OVERLAP + 50;
    for (let i = 0; i < many; i++) await a.store.pages.put(`/article/old-${i}`, html(`old ${i}`), 'a');
    // The sync scripts/serve.ts runs before the server listens.
    const before = await syncStoredPages(b.store, b.folders);
    expect(before).toMatchObject({ checked: many, written: many });
    // Rendered elsewhere between that sync and the worker's LISTEN: no note reaches this server.
    await a.store.pages.put('/article/between', html('between'), 'a');
    const lines: string[] = [];
    const stop = await followStoredPages(b.store, b.folders, {
      owner: 'b',
      onSearchJob: () => {},
      syncedThrough: before.throughSeq,
      log: (line) => lines.push(line),
    });
    await stop();
    const synced = lines.find((line) => line.includes('synced stored pages (start'));
    // The new page and the overlap kept for puts still in flight, not every page again.
    expect(synced).toContain(`${SEQ_OVERLAP + 1} checked, 1 written`);
    expect(fs.readFileSync(path.join(b.folders.clientDir, 'article/between/index.html'), 'utf8')).toContain('between');
  });

  // Seeding draws and encodes every demo hero image with sharp: tens of seconds on a busy 2-core machine.
  it("gives every server the seed's hero images", { timeout: 120_000 }, async () => {
    const url = await databaseFor(makeTempDir('meridian-shared-db-'));
    const [a, b] = [await server(url), await server(url)];
    await seedDemoContent(a);
    const images = fs.readdirSync(a.folders.imagesDir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.webp'));
    expect(images.length).toBeGreaterThan(0);
    await syncStoredPages(b.store, b.folders);
    for (const image of images) {
      expect(
        fs.readFileSync(path.join(b.folders.imagesDir, image)).equals(fs.readFileSync(path.join(a.folders.imagesDir, image))),
        image,
      ).toBe(true);
    }
  });
});
