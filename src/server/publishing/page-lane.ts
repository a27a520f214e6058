/**
 * The worker's page lane, one page at a time: renders a public path through the regenerator, stores
 * the bytes for the other servers (several servers on one database), counts it, batches the CDN purge,
 * and queues the search bundle of an article page it wrote. Which page runs when is the worker's.
 */
import fs from 'node:fs/promises';
import type { Store } from '../../store/types.ts';
import type { Metrics } from '../metrics.ts';
import { searchDay } from '../clock.ts';
import type { FileOutcome } from './files.ts';
import type { Regenerator } from './regenerator.ts';
import { bundleOf, indexedPart, searchJobPath } from './search-index.ts';
import { fileForPath } from './paths.ts';
import { articleInputFingerprint } from './render-inputs.ts';

/** An article's own page (not its live.json). */
const ARTICLE_PAGE = /^\/article\/[^/]+$/;

/** Article pages whose last search queueing is remembered (oldest forgotten first). */
const REMEMBERED_PAGES = 10_000;

/** The figures the lane adds to the worker's stats. */
export type PageStats = { written: number; deleted: number; unchanged: number; renderMs: number };

export type PageLaneDeps = {
  regenerator: Regenerator;
  store: Store;
  metrics: Metrics;
  stats: PageStats;
  /** Several servers on one database: this server's name in the stored pages (undefined: one server). */
  sharedOwner: string | undefined;
  /** Takes a written or removed path for the CDN purge. */
  purge: (publicPath: string) => void;
  /** Queues the search bundles named (run after the pages). */
  queueSearch: (bundles: string[]) => Promise<void>;
};

/**
 * What a reconcile checks pages for: `data`, pages that may be older than the store (every search
 * bundle is indexed again when it ends); `build`, pages that match the store but were drawn by another
 * build (only the bundles of article pages whose indexed text changed are indexed again).
 */
export type ReconcileKind = 'data' | 'build';

export type PageLane = {
  /** Renders one page and brings its file in line; `reconcile`: part of a reconcile of that kind. */
  render(publicPath: string, reconcile?: ReconcileKind): Promise<{ outcome: FileOutcome; ms: number }>;
  /** When each path was last rendered (Date.now()), for the job picker's settle time. */
  lastRendered: Map<string, number>;
};

export function createPageLane(deps: PageLaneDeps): PageLane {
  const { regenerator, store, metrics, stats, sharedOwner } = deps;
  const lastRendered = new Map<string, number>();
  /**
   * The record each article page's bundle was last queued for: a page written again from the same
   * record changed only what search ignores (its live updates, issue 35), so it queues no re-index.
   */
  const queuedFor = new Map<string, string>();

  /**
   * Queues the search bundle of an article page just written, unless it was queued for the same record.
   * `announce`: the other servers index it too (they copy the page; a shared redraw leaves them no
   * way to tell whether its text changed).
   */
  async function queueBundleOf(publicPath: string, announce = false): Promise<void> {
    const article = await store.articles.getBySlug(decodeURIComponent(publicPath.slice('/article/'.length)));
    const indexed = article?.status === 'published' ? articleInputFingerprint(article) : undefined;
    if (article && indexed !== undefined && queuedFor.get(publicPath) !== indexed) {
      const bundle = bundleOf(article, searchDay());
      await deps.queueSearch([bundle]);
      if (announce && sharedOwner !== undefined) await store.pages.put(searchJobPath(bundle), undefined, sharedOwner);
      queuedFor.delete(publicPath);
      queuedFor.set(publicPath, indexed);
      if (queuedFor.size > REMEMBERED_PAGES) queuedFor.delete(queuedFor.keys().next().value!);
    }
  }

  async function render(publicPath: string, reconcile?: ReconcileKind): Promise<{ outcome: FileOutcome; ms: number }> {
    const articlePage = ARTICLE_PAGE.test(publicPath);
    // A new build's page is indexed again only when the text search reads of it changed (not for a new footer).
    const before =
      reconcile === 'build' && articlePage
        ? await fs.readFile(fileForPath(regenerator.clientDir, publicPath), 'utf8').catch(() => undefined)
        : undefined;
    const { outcome, body, ms } = await regenerator.regenerate(publicPath);
    // Stored before the job completes: a server killed in between leaves the job, and the next one stores it.
    if (
      sharedOwner !== undefined &&
      (outcome === 'written' || outcome === 'deleted' || (outcome === 'absent' && reconcile === undefined))
    ) {
      await store.pages.put(publicPath, body, sharedOwner);
    }
    lastRendered.set(publicPath, Date.now());
    stats.renderMs += ms;
    metrics.pagesRendered.inc({ outcome });
    metrics.renderSeconds.observe(ms / 1000);
    if (outcome === 'written' || outcome === 'deleted') {
      stats[outcome]++;
      deps.purge(publicPath);
      // The article's bundle must read this page: queue it (again) now that the file is on disk.
      // (A reconcile of the data re-indexes every bundle when it ends.)
      if (outcome === 'written' && articlePage) {
        if (reconcile === undefined) await queueBundleOf(publicPath);
        else if (reconcile === 'build') {
          const after = body === undefined ? undefined : Buffer.from(body).toString('utf8');
          if (before === undefined || after === undefined || indexedPart(before) !== indexedPart(after)) {
            queuedFor.delete(publicPath);
            await queueBundleOf(publicPath, true);
          }
        }
      }
    } else if (outcome === 'unchanged') {
      stats.unchanged++;
    }
    return { outcome, ms };
  }

  return { render, lastRendered };
}
