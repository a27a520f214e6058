/** The breaking-news ticker: published breaking articles (10 at most), refreshed every 60 seconds. */
import { useQuery } from '@tanstack/react-query';
import { withQueryClient } from '../../lib/query-client.tsx';
import type { Article } from '../../schemas/article.ts';

/** Ticker limit and refresh (docs/product.md, Interface rules: timings and sizes). */
export const TICKER_LIMIT = 10;
export const TICKER_REFRESH_MS = 60_000;

function BreakingTicker() {
  const { data } = useQuery<Article[]>({
    // status=published: a signed-in author or editor reading the site sees the readers' ticker, not their drafts.
    queryKey: ['/api/articles', { status: 'published', isBreaking: 'true', limit: TICKER_LIMIT }],
    refetchInterval: TICKER_REFRESH_MS,
  });
  // The bar is in the static HTML at its full height before the list arrives (and stays when there is
  // no breaking news), so the page below it never moves: a bar that appeared later pushed it down.
  if (!data) {
    return (
      <div className="ticker ticker-pending" aria-hidden="true">
        <span className="ticker-label">Breaking</span>
      </div>
    );
  }
  if (data.length === 0) {
    return (
      <section className="ticker ticker-quiet" aria-label="Breaking news" data-testid="breaking-ticker">
        <span className="ticker-label">Breaking</span>
        <p className="ticker-empty">No breaking news right now.</p>
      </section>
    );
  }
  const items = data.map((article) => (
    <li key={article.id}>
      <a href={`/article/${encodeURIComponent(article.slug)}`}>{article.title}</a>
    </li>
  ));
  return (
    <section className="ticker" aria-label="Breaking news" data-testid="breaking-ticker">
      <span className="ticker-label">Breaking</span>
      <div className="ticker-track">
        <ul className="ticker-list">{items}</ul>
      </div>
    </section>
  );
}

export default withQueryClient(BreakingTicker);
