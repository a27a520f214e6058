/** The article card: rendered to static HTML by the section view and live by the search island (same markup). */
import { heroImageAttributes } from '../../schemas/image.ts';
import { labelSection } from '../../lib/sections.ts';
import { RelativeTime } from '../shared/RelativeTime.tsx';
// The zod-free module: this card is part of the search island's bundle.
import { slugifyTerm, termPath } from '../../schemas/term-slug.ts';

/** What a card shows; the fields of ArticleSummary, loosened for results that come from the search index. */
export type CardArticle = {
  slug: string;
  title: string;
  dek?: string | undefined;
  heroImage?: string | undefined;
  section: string;
  sourceLabel?: string | undefined;
  sourceUrl?: string | undefined;
  publishedAt?: string | undefined;
  readingTime?: number | undefined;
  isBreaking?: boolean | undefined;
  isEditorsPick?: boolean | undefined;
  /** Linked to the author's archive (issue 35) when it has a slug. */
  authorName?: string | undefined;
};

export const DEFAULT_HERO = { src: '/brand/default-hero.png', width: 1200, height: 675 } as const;
const CARD_SIZES = '(max-width: 639px) calc(100vw - 2.5rem), (max-width: 1023px) 45vw, 380px';

/** Props for the hero <img> of a card or article (default image when the article has none). */
export function heroImgProps(heroImage: string | undefined) {
  if (!heroImage) return { ...DEFAULT_HERO };
  const attributes = heroImageAttributes(heroImage);
  return { src: attributes.src, srcSet: attributes.srcset, width: attributes.width, height: attributes.height };
}

export function ArticleCard({ article, eager = false }: { article: CardArticle; eager?: boolean }) {
  const href = `/article/${encodeURIComponent(article.slug)}`;
  const image = heroImgProps(article.heroImage);
  const titleId = `card-${article.slug}`;
  const authorSlug = article.authorName ? slugifyTerm(article.authorName) : '';
  return (
    <article className="card" aria-labelledby={titleId} data-testid="article-card">
      <div className="card-media">
        <img
          {...image}
          sizes={image.srcSet ? CARD_SIZES : undefined}
          alt=""
          loading={eager ? 'eager' : 'lazy'}
          decoding="async"
          data-testid="card-image"
        />
        <div className="card-badges">
          <a className="badge" href={`/section/${article.section}`} data-testid="card-section">
            {labelSection(article.section)}
          </a>
          {article.isBreaking && <span className="badge badge-breaking">Breaking</span>}
          {article.isEditorsPick && <span className="badge badge-pick">Editor's Pick</span>}
        </div>
      </div>
      <div className="card-body">
        <h3 className="card-title" id={titleId}>
          <a href={href}>{article.title}</a>
        </h3>
        {article.dek && <p className="card-dek">{article.dek}</p>}
        <div className="card-meta">
          {/* The time comes last: the browser swaps the date for "3 hours ago", and nothing after it may move. */}
          {authorSlug && (
            <>
              <a className="card-author" href={termPath('author', authorSlug)} data-testid="card-author">
                {article.authorName}
              </a>
              {(article.sourceLabel || article.readingTime !== undefined || article.publishedAt) && (
                <span className="dot" aria-hidden="true" />
              )}
            </>
          )}
          {article.sourceLabel && (
            <span className="card-source" data-testid="card-source">
              {article.sourceLabel}
            </span>
          )}
          {article.sourceLabel && article.readingTime !== undefined && <span className="dot" aria-hidden="true" />}
          {article.readingTime !== undefined && <span data-testid="card-reading-time">{article.readingTime} min read</span>}
          {article.publishedAt && (
            <>
              {(article.sourceLabel || article.readingTime !== undefined) && <span className="dot" aria-hidden="true" />}
              <RelativeTime iso={article.publishedAt} />
            </>
          )}
        </div>
        <div className="card-actions">
          <a href={href} aria-describedby={titleId}>
            Read Article →
          </a>
          {article.sourceUrl && (
            <a href={article.sourceUrl} target="_blank" rel="noopener noreferrer" aria-describedby={titleId}>
              View Source →<span className="visually-hidden"> (opens in a new tab)</span>
            </a>
          )}
        </div>
      </div>
    </article>
  );
}
