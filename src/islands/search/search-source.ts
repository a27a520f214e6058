/**
 * Where search results come from: the static Pagefind index (one bundle per month, the newest loaded
 * and the others merged into it) when it is published, else the /api/search endpoints.
 */
import { api } from '../../lib/api-client.ts';
import type { ArticleSummary } from '../../schemas/article.ts';
import type { CardArticle } from '../cards/ArticleCard.tsx';

export const SEARCH_PAGE_SIZE = 12;
/** The months that have a bundle, newest first (written by the server after each bundle swap). */
export const PAGEFIND_PERIODS_URL = '/pagefind/periods.json';

export type SearchRequest = { q: string; section: string; page: number };
export type SearchAnswer = { items: CardArticle[]; total: number; engine: 'pagefind' | 'api' };

type PagefindResult = { id: string; data: () => Promise<{ url: string; meta: Record<string, string | undefined> }> };
type Pagefind = {
  options?: (options: Record<string, unknown>) => Promise<void>;
  init?: () => Promise<void>;
  mergeIndex: (indexPath: string, options?: Record<string, unknown>) => Promise<void>;
  search: (query: string, options?: { filters?: Record<string, string> }) => Promise<{ results: PagefindResult[] } | null>;
};

let pagefind: Promise<Pagefind | undefined> | undefined;

/** Loads the Pagefind runtime once; undefined when the index has not been built (or cannot load). */
export function loadPagefind(): Promise<Pagefind | undefined> {
  pagefind ??= (async () => {
    try {
      const response = await fetch(PAGEFIND_PERIODS_URL, { cache: 'no-cache' });
      if (!response.ok) return undefined;
      const { periods } = (await response.json()) as { periods?: unknown };
      if (!Array.isArray(periods) || periods.length === 0 || !periods.every((p) => typeof p === 'string' && /^\d{4}-\d{2}$/.test(p))) return undefined;
      const [newest, ...older] = periods as string[];
      // A runtime URL on purpose: the index is produced after the build and must not be bundled.
      const module = (await import(/* @vite-ignore */ `/pagefind/${newest}/pagefind.js`)) as Pagefind;
      await module.init?.();
      // Each month is a bundle of its own, so a publish re-indexes one month; they search as one.
      await Promise.all(older.map((period) => module.mergeIndex(`/pagefind/${period}/`)));
      return module;
    } catch {
      return undefined;
    }
  })();
  return pagefind;
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

async function searchPagefind(engine: Pagefind, request: SearchRequest): Promise<SearchAnswer> {
  const filters = request.section !== 'all' ? { section: request.section } : undefined;
  const answer = await engine.search(request.q, filters ? { filters } : {});
  const results = answer?.results ?? [];
  const start = (request.page - 1) * SEARCH_PAGE_SIZE;
  const data = await Promise.all(results.slice(start, start + SEARCH_PAGE_SIZE).map((r) => r.data()));
  return { items: data.map((d) => cardFromPagefind(d.url, d.meta)), total: results.length, engine: 'pagefind' };
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
  const engine = await loadPagefind();
  if (engine) {
    try {
      return await searchPagefind(engine, request);
    } catch {
      // A broken or half-swapped index: the API answers instead.
    }
  }
  return searchApi(request, signal);
}
