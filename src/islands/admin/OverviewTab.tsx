/** Overview tab: the four stat cards, the Publishing panel and the readers' charts (issue 33), and the ten most recent articles. */
import { useQuery } from '@tanstack/react-query';
import type { Article, ArticleStats } from '../../schemas/article.ts';
import { adminKeys, RECENT_ARTICLES_LIMIT } from './admin-queries.ts';
import { ArticleRow } from './ArticleRow.tsx';
import { QueryFailure, Spinner } from './AdminUi.tsx';
import { useArticleActions } from './use-article-actions.ts';
import { usePermissions } from '../auth/use-permissions.ts';
import { AnalyticsOverview, TopArticles } from './charts/AnalyticsOverview.tsx';
import { PublishingPanel } from './PublishingPanel.tsx';

const STAT_CARDS: { key: keyof ArticleStats; label: string }[] = [
  { key: 'totalArticles', label: 'Total Articles' },
  { key: 'published', label: 'Published' },
  { key: 'drafts', label: 'Drafts' },
  { key: 'scheduled', label: 'Scheduled' },
];

export function OverviewTab() {
  const { can, ready } = usePermissions();
  // Archive-wide counts are for admins and editors; authors and contributors see their own recent articles only.
  const showStats = !ready || can('article.stats');
  const stats = useQuery<ArticleStats>({ queryKey: adminKeys.stats(), enabled: ready && showStats });
  const recent = useQuery<Article[]>({ queryKey: adminKeys.articles({ limit: RECENT_ARTICLES_LIMIT }) });
  const { remove, confirmAndDelete } = useArticleActions();

  return (
    <div className="adm-stack">
      {showStats && (
        <section aria-label="Article statistics" className="adm-stats">
          {STAT_CARDS.map(({ key, label }) => (
            <div className="adm-card adm-stat" key={key} data-testid={`stat-${key}`}>
              <span className="adm-stat-label">{label}</span>
              <span className="adm-stat-value">{stats.data ? stats.data[key] : stats.isError ? '–' : '…'}</span>
            </div>
          ))}
        </section>
      )}

      {ready && can('publishing.manage') && <PublishingPanel />}

      {/* Site-wide figures for admins and editors; an author sees the top list of their own articles; a contributor no figures. */}
      {ready && (showStats ? <AnalyticsOverview /> : can('analytics.read') && <TopArticles />)}

      <section className="adm-card" aria-labelledby="recent-heading">
        <h2 id="recent-heading" className="adm-card-title">
          Recent Articles
        </h2>
        {recent.isPending ? (
          <Spinner label="Loading recent articles" />
        ) : recent.isError ? (
          <QueryFailure what="recent articles" onRetry={() => void recent.refetch()} />
        ) : recent.data.length === 0 ? (
          <p className="adm-empty">No articles yet.</p>
        ) : (
          <ul className="adm-list">
            {recent.data.map((article) => (
              <ArticleRow
                key={article.id}
                article={article}
                deleting={remove.isPending && remove.variables === article.id}
                onDelete={confirmAndDelete}
              />
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}
