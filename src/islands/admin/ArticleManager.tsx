/** Article Manager tab: filters, 12 articles a page, status changes, vote adjustments and deletes. */
import { useState, type FormEvent } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { ARTICLE_STATUSES, type Article } from '../../schemas/article.ts';
import { SECTIONS, type CountResponse } from '../../schemas/common.ts';
import { labelSection } from '../../lib/sections.ts';
import { adminKeys, ARTICLE_MANAGER_PAGE_SIZE } from './admin-queries.ts';
import { articleFilterParams, EMPTY_ARTICLE_FILTERS, type ArticleFilters } from './admin-format.ts';
import { ManagerArticleCard } from './ManagerArticleCard.tsx';
import { Pagination } from './Pagination.tsx';
import { QueryFailure, Spinner } from './AdminUi.tsx';
import { useArticleActions } from './use-article-actions.ts';
import { usePermissions } from '../auth/use-permissions.ts';
import { analyticsKeys, type AnalyticsSparklines } from './charts/analytics-contract.ts';

/** The Article Manager's sparklines: views per day over the last two weeks. */
const SPARK_DAYS = 14;

export function ArticleManager() {
  // The form edits a draft of the filters; Search applies them (and goes back to page 1).
  const [draft, setDraft] = useState<ArticleFilters>(EMPTY_ARTICLE_FILTERS);
  const [applied, setApplied] = useState<ArticleFilters>(EMPTY_ARTICLE_FILTERS);
  const [page, setPage] = useState(1);
  const filterParams = articleFilterParams(applied);

  const list = useQuery<Article[]>({
    queryKey: adminKeys.articles({ ...filterParams, page, pageSize: ARTICLE_MANAGER_PAGE_SIZE }),
    placeholderData: keepPreviousData,
  });
  const count = useQuery<CountResponse>({ queryKey: adminKeys.articleCount(filterParams), placeholderData: keepPreviousData });
  const totalPages = count.data ? Math.ceil(count.data.count / ARTICLE_MANAGER_PAGE_SIZE) : 0;
  const actions = useArticleActions();
  // One request for the page's sparklines; authors get their own articles' only, contributors none (the API answers 403).
  const { can, ready } = usePermissions();
  const publishedIds = (list.data ?? []).filter((a) => a.publishedAt).map((a) => a.id);
  const sparklines = useQuery<AnalyticsSparklines>({
    queryKey: analyticsKeys.sparklines(publishedIds, SPARK_DAYS),
    enabled: ready && can('analytics.read') && publishedIds.length > 0,
  });

  const update = (field: keyof ArticleFilters) => (event: { target: { value: string } }) =>
    setDraft((current) => ({ ...current, [field]: event.target.value }));

  const applyFilters = (event: FormEvent) => {
    event.preventDefault();
    setApplied(draft);
    setPage(1);
  };
  const resetFilters = () => {
    setDraft(EMPTY_ARTICLE_FILTERS);
    setApplied(EMPTY_ARTICLE_FILTERS);
    setPage(1);
  };

  return (
    <div className="adm-stack">
      <form className="adm-card adm-filters" role="search" aria-label="Filter articles" onSubmit={applyFilters}>
        <label className="adm-field adm-field-wide">
          <span>Search</span>
          <input type="search" value={draft.search} onChange={update('search')} placeholder="Title, deck, author, tags..." />
        </label>
        <label className="adm-field">
          <span>Section</span>
          <select value={draft.section} onChange={update('section')}>
            <option value="">All sections</option>
            {SECTIONS.map((section) => (
              <option key={section} value={section}>
                {labelSection(section)}
              </option>
            ))}
          </select>
        </label>
        <label className="adm-field">
          <span>Status</span>
          <select value={draft.status} onChange={update('status')}>
            <option value="">All statuses</option>
            {ARTICLE_STATUSES.map((status) => (
              <option key={status} value={status}>
                {status}
              </option>
            ))}
          </select>
        </label>
        <label className="adm-field">
          <span>Source</span>
          <input type="text" value={draft.source} onChange={update('source')} placeholder="Source name" />
        </label>
        <label className="adm-field">
          <span>Date from</span>
          <input type="date" value={draft.dateFrom} onChange={update('dateFrom')} />
        </label>
        <label className="adm-field">
          <span>Date to</span>
          <input type="date" value={draft.dateTo} onChange={update('dateTo')} />
        </label>
        <div className="adm-actions adm-filters-actions">
          <button type="submit" className="adm-btn adm-btn-primary">
            Search
          </button>
          <button type="button" className="adm-btn adm-btn-outline" onClick={resetFilters}>
            Reset
          </button>
        </div>
      </form>

      <p className="adm-muted" aria-live="polite" data-testid="manager-count">
        {count.data ? `${count.data.count} ${count.data.count === 1 ? 'article' : 'articles'}` : ''}
      </p>

      {list.isPending ? (
        <Spinner label="Loading articles" />
      ) : list.isError ? (
        <QueryFailure what="articles" onRetry={() => void list.refetch()} />
      ) : list.data.length === 0 ? (
        <p className="adm-empty">No articles match these filters.</p>
      ) : (
        <ul className="adm-grid" aria-busy={list.isFetching}>
          {list.data.map((article) => (
            <ManagerArticleCard
              key={article.id}
              article={article}
              actions={actions}
              spark={sparklines.data?.items[article.id]}
              sparkDays={SPARK_DAYS}
            />
          ))}
        </ul>
      )}

      <Pagination page={page} totalPages={totalPages} onChange={setPage} label="Article pages" />
    </div>
  );
}
