/** The /admin island: six tabs (Overview, Article Manager, Comments, News Sources, Subscribers, Trash) over the shared QueryClient. */
import { useId, useState, type KeyboardEvent } from 'react';
import { withQueryClient } from '../../lib/query-client.tsx';
import { ArticleManager } from './ArticleManager.tsx';
import { CommentsTab } from './CommentsTab.tsx';
import { NewsSourcesTab } from './NewsSourcesTab.tsx';
import { OverviewTab } from './OverviewTab.tsx';
import { SubscribersTab } from './SubscribersTab.tsx';
import { TrashTab } from './TrashTab.tsx';
import { useHydrated } from './use-hydrated.ts';

const TABS = [
  { id: 'overview', label: 'Overview' },
  { id: 'articles', label: 'Article Manager' },
  { id: 'comments', label: 'Comments' },
  { id: 'sources', label: 'News Sources' },
  { id: 'subscribers', label: 'Subscribers' },
  { id: 'trash', label: 'Trash' },
] as const;
type TabId = (typeof TABS)[number]['id'];

function isTabId(value: string | null): value is TabId {
  return TABS.some((tab) => tab.id === value);
}

type Props = { initialTab?: string | undefined; username?: string | undefined };

function AdminDashboard({ initialTab, username }: Props) {
  const [tab, setTab] = useState<TabId>(isTabId(initialTab ?? null) ? (initialTab as TabId) : 'overview');
  const baseId = useId();
  const hydrated = useHydrated();

  // The tab lives in the URL (?tab=...) so a reload or a link returns to it.
  const selectTab = (next: TabId) => {
    setTab(next);
    const url = new URL(window.location.href);
    if (next === 'overview') url.searchParams.delete('tab');
    else url.searchParams.set('tab', next);
    window.history.replaceState(null, '', url);
  };

  const onTabKey = (event: KeyboardEvent<HTMLButtonElement>) => {
    const index = TABS.findIndex((t) => t.id === tab);
    const delta = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
    if (!delta) return;
    event.preventDefault();
    const next = TABS[(index + delta + TABS.length) % TABS.length]!;
    selectTab(next.id);
    document.getElementById(`${baseId}-tab-${next.id}`)?.focus();
  };

  return (
    <div className="adm" data-hydrated={hydrated}>
      <header className="adm-header">
        <div>
          <h1 className="adm-title">Admin Dashboard</h1>
          {username && <p className="adm-muted">Signed in as {username}</p>}
        </div>
        {(tab === 'overview' || tab === 'articles') && (
          <a className="adm-btn adm-btn-primary" href="/admin/editor">
            New Article
          </a>
        )}
      </header>

      <div className="adm-tabs" role="tablist" aria-label="Dashboard sections">
        {TABS.map((t) => (
          <button
            key={t.id}
            id={`${baseId}-tab-${t.id}`}
            type="button"
            role="tab"
            className="adm-tab"
            aria-selected={tab === t.id}
            aria-controls={`${baseId}-panel`}
            tabIndex={tab === t.id ? 0 : -1}
            onClick={() => selectTab(t.id)}
            onKeyDown={onTabKey}
          >
            {t.label}
          </button>
        ))}
      </div>

      <div id={`${baseId}-panel`} role="tabpanel" aria-labelledby={`${baseId}-tab-${tab}`} className="adm-panel">
        {tab === 'overview' && <OverviewTab />}
        {tab === 'articles' && <ArticleManager />}
        {tab === 'comments' && <CommentsTab />}
        {tab === 'sources' && <NewsSourcesTab />}
        {tab === 'subscribers' && <SubscribersTab />}
        {tab === 'trash' && <TrashTab />}
      </div>
    </div>
  );
}

export default withQueryClient(AdminDashboard);
