/**
 * The /admin island: the tabs the user's role may use (Overview, Article Manager, Comments, News Sources,
 * Subscribers, Members, Tags, Trash, Users, Audit)
 * over the shared QueryClient.
 */
import { useId, useState, type KeyboardEvent } from 'react';
import { withQueryClient } from '../../lib/query-client.tsx';
import { ArticleManager } from './ArticleManager.tsx';
import { CommentsTab } from './CommentsTab.tsx';
import { NewsSourcesTab } from './NewsSourcesTab.tsx';
import { OverviewTab } from './OverviewTab.tsx';
import { SubscribersTab } from './SubscribersTab.tsx';
import { MembersTab } from './MembersTab.tsx';
import { TrashTab } from './TrashTab.tsx';
import { useHydrated } from './use-hydrated.ts';
import { UsersTab } from './UsersTab.tsx';
import { AuditTab } from './AuditTab.tsx';
import { TagsTab } from './TagsTab.tsx';
import { useCurrentUser } from '../auth/use-current-user.ts';
import { usePermissions } from '../auth/use-permissions.ts';
import type { Action } from '../../lib/permissions.ts';
import type { PublicUser } from '../../schemas/auth.ts';

/** Each tab with the permission it needs: a role sees only the tabs it may use (issue 14). */
const ALL_TABS = [
  { id: 'overview', label: 'Overview', needs: 'article.create' },
  { id: 'articles', label: 'Article Manager', needs: 'article.create' },
  { id: 'comments', label: 'Comments', needs: 'comment.moderate' },
  { id: 'sources', label: 'News Sources', needs: 'source.manage' },
  { id: 'subscribers', label: 'Subscribers', needs: 'subscriber.manage' },
  { id: 'members', label: 'Members', needs: 'member.read' },
  { id: 'tags', label: 'Tags', needs: 'tag.manage' },
  { id: 'trash', label: 'Trash', needs: 'trash.manage' },
  { id: 'users', label: 'Users', needs: 'user.manage' },
  { id: 'audit', label: 'Audit', needs: 'audit.read' },
] as const satisfies readonly { id: string; label: string; needs: Action }[];
type TabId = (typeof ALL_TABS)[number]['id'];

type Props = { initialTab?: string | undefined; username?: string | undefined; currentUser?: PublicUser | undefined };

function AdminDashboard({ initialTab, username, currentUser }: Props) {
  useCurrentUser(currentUser);
  const { can, role } = usePermissions();
  const TABS = ALL_TABS.filter((t) => can(t.needs));
  const isTabId = (value: string | null): value is TabId => TABS.some((t) => t.id === value);
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
          {username && (
            <p className="adm-muted" data-testid="signed-in-as">
              Signed in as {username}
              {role && ` (${role})`}
            </p>
          )}
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
        {tab === 'members' && <MembersTab />}
        {tab === 'users' && <UsersTab />}
        {tab === 'audit' && <AuditTab />}
        {tab === 'trash' && <TrashTab />}
        {tab === 'tags' && <TagsTab />}
      </div>
    </div>
  );
}

export default withQueryClient(AdminDashboard);
