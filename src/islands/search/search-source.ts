/**
 * Where search results come from: the static Pagefind index (today's head bundle and the recent
 * bundles first, older ones merged in a few at a time only while a query asks for more than those
 * searched hold), else the /api/search endpoints.
 */
import { api } from '../../lib/api-client.ts';
import type { ArticleSummary } from '../../schemas/article.ts';
import type { CardArticle } from '../cards/ArticleCard.tsx';

export const SEARCH_PAGE_SIZE = 12;
/** The bundles, newest first (written by the server after each bundle swap). */
export const PAGEFIND_PERIODS_URL = '/pagefind/periods.json';
/**
 * Bundles the first query loads: the head, this month so far and the closed months behind them.
 * Each bundle costs its metadata and one index chunk per word (docs/performance.md, 2026-11-23 entry on search tiers),
 * so the first query stays near its weight budget however long the archive is.
 */
export const RECENT_BUNDLES = 4;
/**
 * Older bundles merged first when a query needs more results than the recent ones hold: a reader paging a
 * little further does not pay for a large archive's every week. A query that still needs more (a deep
 * page), or that the recent ones do not hold at all (a rare word, a name), merges all the rest at once:
 * one round, not one per step.
 */
export const ARCHIVE_STEP = 8;
// The names search-index.ts gives bundles: closed month, week of a large closed month, month so far, a full block of today, today's head.
const BUNDLE = /^(?:\d{4}-\d{2}|\d{4}-\d{2}-w[1-5]|\d{4}-\d{2}-\d{2}|\d{4}-\d{2}-\d{2}-b\d{3}|head-\d{4}-\d{2}-\d{2})$/;

export type SearchRequest = { q: string; section: string; page: number };
/** `more`: older bundles were not searched yet; `total` counts those searched only (asking for a page past them merges more). */
export type SearchAnswer = { items: CardArticle[]; total: number; engine: 'pagefind' | 'api'; more?: boolean };

type PagefindResult = { id: string; data: () => Promise<{ url: string; meta: Record<string, string | undefined> }> };
type Pagefind = {
  options?: (options: Record<string, unknown>) => Promise<void>;
  init?: () => Promise<void>;
  mergeIndex: (indexPath: string, options?: Record<string, unknown>) => Promise<void>;
  search: (query: string, options?: { filters?: Record<string, string> }) => Promise<{ results: PagefindResult[] } | null>;
};
type Engine = { pagefind: Pagefind; older: string[] };

let engine: Promise<Engine | undefined> | undefined;
let merging: Promise<void> | undefined;
let olderMerged = 0;

/** Loads the Pagefind runtime and the recent bundles once; undefined when the index has not been built (or cannot load). */
function loadPagefind(): Promise<Engine | undefined> {
  engine ??= (async () => {
    try {
      const response = await fetch(PAGEFIND_PERIODS_URL, { cache: 'no-cache' });
      if (!response.ok) return undefined;
      const { periods } = (await response.json()) as { periods?: unknown };
      if (!Array.isArray(periods) || periods.length === 0 || !periods.every((p) => typeof p === 'string' && BUNDLE.test(p)))
        return undefined;
      const [newest, ...rest] = periods as string[];
      // A runtime URL on purpose: the index is produced after the build and must not be bundled.
      const pagefind = (await import(/* @vite-ignore */ `/pagefind/${newest}/pagefind.js`)) as Pagefind;
      await pagefind.init?.();
      const recent = rest.slice(0, RECENT_BUNDLES - 1);
      await Promise.all(recent.map((name) => pagefind.mergeIndex(`/pagefind/${name}/`)));
      return { pagefind, older: rest.slice(RECENT_BUNDLES - 1) };
    } catch {
      return undefined;
    }
  })();
  return engine;
}

/**
 * Merges the next ARCHIVE_STEP older bundles, or all the rest (`all`, and any step after the first;
 * callers at the same time share one step). A step that fails stays failed: merging its bundles again
 * could list their pages twice, so the API answers instead.
 */
function mergeOlder(loaded: Engine, all: boolean): Promise<void> {
  merging ??= (async () => {
    const step = loaded.older.slice(0, all || olderMerged > 0 ? loaded.older.length : ARCHIVE_STEP);
    await Promise.all(step.map((name) => loaded.pagefind.mergeIndex(`/pagefind/${name}/`)));
    loaded.older = loaded.older.slice(step.length);
    olderMerged += step.length;
    merging = undefined;
  })();
  return merging;
}

/** How many older bundles searches cover now (part of the query key, so answers given before a merge are asked again). */
export function olderBundlesMerged(): number {
  return olderMerged;
}

/** A card from the meta fields the article page declares for the index. */
function cardFromPagefind(url: string, meta: Record<string, string | undefined>): CardArticle {
  const path = meta.url ?? url.replace(/\/$/, '').replace(/\.html$/, '');
  const slug = decodeURIComponent(path.split('/').pop() ?? '');
  const readingTime = Number(meta.readingTime);
  return {
    slug,
    title: meta.title ?? slug,
    dek: meta.dek,
    heroImage: meta.image && !meta.image.startsWith('/brand/') ? meta.image : undefined,
    section: meta.section ?? 'world',
    sourceLabel: meta.source,
    sourceUrl: meta.sourceUrl,
    publishedAt: meta.published,
    readingTime: Number.isFinite(readingTime) && readingTime > 0 ? readingTime : undefined,
    isBreaking: meta.breaking === 'true',
    isEditorsPick: meta.editorsPick === 'true',
  };
}

async function searchPagefind(loaded: Engine, request: SearchRequest): Promise<SearchAnswer> {
  const filters = request.section !== 'all' ? { section: request.section } : undefined;
  const start = (request.page - 1) * SEARCH_PAGE_SIZE;
  let results = (await loaded.pagefind.search(request.q, filters ? { filters } : {}))?.results ?? [];
  // The bundles searched cannot fill this page (a rare word, or a page past them): merge older ones, the
  // next few first. A full page is shown as it is, counted as "N+" until the reader pages past it.
  while (loaded.older.length > 0 && results.length < start + SEARCH_PAGE_SIZE) {
    await mergeOlder(loaded, results.length === 0);
    results = (await loaded.pagefind.search(request.q, filters ? { filters } : {}))?.results ?? [];
  }
  const data = await Promise.all(results.slice(start, start + SEARCH_PAGE_SIZE).map((r) => r.data()));
  return {
    items: data.map((d) => cardFromPagefind(d.url, d.meta)),
    total: results.length,
    engine: 'pagefind',
    more: loaded.older.length > 0,
  };
}

async function searchApi(request: SearchRequest, signal?: AbortSignal): Promise<SearchAnswer> {
  const query = { q: request.q, section: request.section, page: request.page, pageSize: SEARCH_PAGE_SIZE };
  const [items, count] = await Promise.all([
    api.get<ArticleSummary[]>('/api/search', { query, signal }),
    api.get<{ count: number }>('/api/search/count', { query: { q: request.q, section: request.section }, signal }),
  ]);
  return { items, total: count.count, engine: 'api' };
}

/** Runs a search: Pagefind first, the API when the index is missing or fails. */
export async function runSearch(request: SearchRequest, signal?: AbortSignal): Promise<SearchAnswer> {
  const loaded = await loadPagefind();
  if (loaded) {
    try {
      return await searchPagefind(loaded, request);
    } catch {
      // A broken or half-swapped index: the API answers instead.
    }
  }
  return searchApi(request, signal);
}
