/** The search screen: query box, section chips, results grid and pagination, with q, section and page kept in the URL. */
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useQuery } from '@tanstack/react-query';
import { withQueryClient } from '../../lib/query-client.tsx';
import { NAV_SECTIONS } from '../../schemas/sections.ts';
import { ArticleCard } from '../cards/ArticleCard.tsx';
import { listPaginationItems } from '../../lib/pagination.ts';
import { SECTION_LABELS } from '../../lib/sections.ts';
import { runSearch, SEARCH_PAGE_SIZE, olderBundlesMerged, type SearchRequest } from './search-source.ts';

/** The chips are all plus the seven nav sections, no markets (docs/decisions.md, Search). */
export const SEARCH_CHIPS = ['all', ...NAV_SECTIONS] as const;

function readUrl(): SearchRequest {
  const params = new URLSearchParams(window.location.search);
  const section = params.get('section') ?? 'all';
  const page = Number(params.get('page'));
  return {
    q: (params.get('q') ?? '').trim(),
    section: (SEARCH_CHIPS as readonly string[]).includes(section) ? section : 'all',
    page: Number.isInteger(page) && page > 0 ? page : 1,
  };
}

function writeUrl(state: SearchRequest): void {
  const params = new URLSearchParams();
  if (state.q) params.set('q', state.q);
  if (state.section !== 'all') params.set('section', state.section);
  if (state.page > 1) params.set('page', String(state.page));
  const qs = params.toString();
  window.history.pushState(null, '', qs ? `/search?${qs}` : '/search');
}

/** What /search shows with no query; also the prerendered HTML's state, so its first paint is the finished page. */
const NO_QUERY: SearchRequest = { q: '', section: 'all', page: 1 };

function SearchPage({ siteName }: { siteName: string }) {
  // The prerendered HTML cannot know the URL's query: it shows the no-query state, and the URL is read once mounted.
  const [state, setState] = useState<SearchRequest>(NO_QUERY);
  const [input, setInput] = useState('');

  const field = useRef<HTMLInputElement>(null);

  useEffect(() => {
    const sync = (typed = '') => {
      const next = readUrl();
      setState(next);
      setInput(next.q || typed);
    };
    // A reader may type while the page hydrates: on mount, what the box holds is kept when the URL has no query.
    sync(field.current?.value);
    const onPopState = () => sync();
    window.addEventListener('popstate', onPopState);
    return () => window.removeEventListener('popstate', onPopState);
  }, []);

  useEffect(() => {
    document.title = state.q ? `Search Results for ${state.q} | ${siteName}` : `Search Articles | ${siteName}`;
  }, [state, siteName]);

  const { data, isFetching, isError } = useQuery({
    queryKey: ['search', state.q, state.section, state.page, olderBundlesMerged()],
    queryFn: ({ signal }) => runSearch(state, signal),
    enabled: Boolean(state.q),
    // Keeps the page on screen while the same query is asked again over the whole archive.
    placeholderData: (previous, query) =>
      query && query.queryKey[1] === state.q && query.queryKey[2] === state.section && query.queryKey[3] === state.page
        ? previous
        : undefined,
  });

  const navigate = (next: SearchRequest, scroll = false) => {
    setState(next);
    writeUrl(next);
    if (scroll) window.scrollTo({ top: 0, behavior: 'smooth' });
  };
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    navigate({ q: input.trim(), section: state.section, page: 1 });
  };

  // Older bundles not searched yet: one more page, whose request merges more of them (and counts again).
  const more = data?.more ? '+' : '';
  const totalPages = data ? Math.ceil(data.total / SEARCH_PAGE_SIZE) + (data.more ? 1 : 0) : 0;
  const current = state.page;

  return (
    <div className="search-page">
      <h1>Search Articles</h1>
      <form className="search-form" role="search" action="/search" method="get" onSubmit={onSubmit} aria-label="Search articles">
        <label htmlFor="search-input" className="visually-hidden">
          Search query
        </label>
        <input
          ref={field}
          id="search-input"
          className="input search-input"
          type="search"
          name="q"
          placeholder="Search articles, topics, authors..."
          value={input}
          onChange={(event) => setInput(event.target.value)}
          autoComplete="off"
        />
        <button type="submit" className="btn btn-primary">
          Search
        </button>
      </form>
      <div className="chips" role="group" aria-label="Filter by section">
        {SEARCH_CHIPS.map((chip) => (
          <button
            key={chip}
            type="button"
            className="chip"
            aria-pressed={state.section === chip}
            onClick={() => navigate({ q: state.q, section: chip, page: 1 })}
          >
            {chip === 'all' ? 'All' : SECTION_LABELS[chip]}
          </button>
        ))}
      </div>

      <div className="search-results" aria-live="polite" aria-busy={isFetching}>
        {!state.q && <p className="empty-state">Enter a search query to find articles</p>}
        {state.q && data && (
          <p className="results-summary" data-testid="results-summary">
            Showing results for: <strong>{state.q}</strong>{' '}
            <span className="results-count">
              ({data.total}
              {more} {data.total === 1 && !more ? 'result' : 'results'}
              {totalPages > 1 ? `, page ${current} of ${data.more ? `${totalPages - 1}+` : totalPages}` : ''})
            </span>
          </p>
        )}
        {state.q && isFetching && !data && <p className="results-loading">Searching…</p>}
        {state.q && isError && <p className="empty-state">Search is unavailable right now. Please try again later.</p>}
        {state.q && data && data.items.length === 0 && <p className="empty-state">No articles found matching {state.q}</p>}
        {data && data.items.length > 0 && <h2 className="visually-hidden">Search results</h2>}
        {data && data.items.length > 0 && (
          <ul className="card-grid" aria-label="Search results" data-engine={data.engine}>
            {data.items.map((article) => (
              <li key={article.slug}>
                <ArticleCard article={article} />
              </li>
            ))}
          </ul>
        )}
      </div>

      {totalPages > 1 && (
        <nav aria-label="Search result pages">
          <ul className="pagination">
            <li>
              <button type="button" disabled={current <= 1} onClick={() => navigate({ ...state, page: current - 1 }, true)}>
                ← Previous
              </button>
            </li>
            {listPaginationItems(current, totalPages).map((item) => (
              <li key={item.kind === 'page' ? item.page : item.key}>
                {item.kind === 'ellipsis' ? (
                  <span className="ellipsis" aria-hidden="true">
                    …
                  </span>
                ) : (
                  <button
                    type="button"
                    aria-current={item.page === current ? 'page' : undefined}
                    aria-label={`Page ${item.page}`}
                    onClick={() => navigate({ ...state, page: item.page }, true)}
                  >
                    {item.page}
                  </button>
                )}
              </li>
            ))}
            <li>
              <button type="button" disabled={current >= totalPages} onClick={() => navigate({ ...state, page: current + 1 }, true)}>
                Next →
              </button>
            </li>
          </ul>
        </nav>
      )}
    </div>
  );
}

export default withQueryClient(SearchPage);
