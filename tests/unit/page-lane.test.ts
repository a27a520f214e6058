/**
 * The worker's page lane over a real store and a real served folder, with a fake `Renderer`: what it
 * counts, purges and stores for other servers, and when it queues an article's search bundle.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPageLane, type PageStats } from '../../src/server/publishing/page-lane.ts';
import { createRegenerator, type Renderer } from '../../src/server/publishing/regenerator.ts';
import { bundleOf } from '../../src/server/publishing/search-index.ts';
import { searchDay } from '../../src/server/clock.ts';
import { articleRecord, closeQuietly, makeRuntime, makeTempDir } from './support.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function laneOver(options: { sharedOwner?: string } = {}) {
  const runtime = await makeRuntime();
  cleanups.push(() => closeQuietly(runtime.store));
  const clientDir = path.join(makeTempDir('meridian-page-lane-'), 'client');
  /** What the renderer answers per path: a page body, or missing when absent. */
  const pages = new Map<string, string>();
  const render: Renderer = async (publicPath) => {
    const text = pages.get(publicPath);
    return text === undefined ? { kind: 'missing' } : { kind: 'page', body: new TextEncoder().encode(text) };
  };
  const stats: PageStats = { written: 0, deleted: 0, unchanged: 0, renderMs: 0 };
  const purged: string[] = [];
  const queued: string[][] = [];
  const lane = createPageLane({
    regenerator: createRegenerator({ clientDir, render }),
    store: runtime.store,
    metrics: runtime.metrics,
    stats,
    sharedOwner: options.sharedOwner,
    purge: (publicPath) => purged.push(publicPath),
    queueSearch: async (bundles) => void queued.push(bundles),
  });
  return { runtime, clientDir, pages, stats, purged, queued, lane };
}

describe('page lane', () => {
  it('counts and purges what it writes and removes, and queues the search bundle of a published article it wrote', async () => {
    const { runtime, clientDir, pages, stats, purged, queued, lane } = await laneOver();
    const article = articleRecord({ slug: 'lane' });
    await runtime.store.articles.insert(article);
    pages.set('/article/lane', '<p>one</p>');

    expect((await lane.render('/article/lane')).outcome).toBe('written');
    expect(fs.readFileSync(path.join(clientDir, 'article', 'lane', 'index.html'), 'utf8')).toBe('<p>one</p>');
    expect(queued).toEqual([[bundleOf(article, searchDay())]]);
    expect((await lane.render('/article/lane')).outcome).toBe('unchanged');
    // In a reconcile of the data the bundle is not queued (it re-indexes every bundle when it ends).
    pages.set('/article/lane', '<p>two</p>');
    expect((await lane.render('/article/lane', 'data')).outcome).toBe('written');
    expect(queued).toHaveLength(1);
    // A listing page is no article: nothing to index.
    pages.set('/section/world', '<p>world</p>');
    await lane.render('/section/world');
    expect(queued).toHaveLength(1);

    pages.delete('/article/lane');
    expect((await lane.render('/article/lane')).outcome).toBe('deleted');
    expect(stats).toMatchObject({ written: 3, unchanged: 1, deleted: 1 });
    expect(purged).toEqual(['/article/lane', '/article/lane', '/section/world', '/article/lane']);
    expect(lane.lastRendered.has('/article/lane')).toBe(true);
    const metric = await runtime.metrics.pagesRendered.get();
    expect(metric.values.find((v) => v.labels.outcome === 'written')?.value).toBe(3);
  });

  it("in a new build's reconcile, queues an article's bundle only when the text search reads of its page changed", async () => {
    const { runtime, pages, queued, lane } = await laneOver();
    const article = articleRecord({ slug: 'built' });
    await runtime.store.articles.insert(article);
    const page = (text: string, footer: string) =>
      `<html lang="en"><body><article data-pagefind-body><h1>${text}</h1></article><footer>${footer}</footer></body></html>`;
    pages.set('/article/built', page('Title', 'Old footer'));
    await lane.render('/article/built', 'data');
    expect(queued).toEqual([]);
    // A new footer: the page is written, its bundle kept.
    pages.set('/article/built', page('Title', 'New footer'));
    expect((await lane.render('/article/built', 'build')).outcome).toBe('written');
    expect(queued).toEqual([]);
    // A template that changes the text itself: its bundle is indexed again.
    pages.set('/article/built', page('Title, set anew', 'New footer'));
    expect((await lane.render('/article/built', 'build')).outcome).toBe('written');
    expect(queued).toEqual([[bundleOf(article, searchDay())]]);
  });

  it('stores what it writes or removes for the other servers when the database is shared, not an unchanged page', async () => {
    const { runtime, pages, lane } = await laneOver({ sharedOwner: 'server-a' });
    const notes: string[] = [];
    const stop = await runtime.store.pages.listen((note) => void notes.push(`${note.path} ${note.origin}`));
    cleanups.push(stop);
    pages.set('/section/world', '<p>world</p>');
    await lane.render('/section/world');
    await lane.render('/section/world');
    pages.delete('/section/world');
    await lane.render('/section/world');
    // A page already absent: stored as a removal from a job (other servers may have it), not from a reconcile.
    await lane.render('/section/world', 'data');
    await lane.render('/section/world');
    await expect.poll(() => notes.length).toBe(3);
    expect(notes).toEqual(['/section/world server-a', '/section/world server-a', '/section/world server-a']);
  });
});
