/**
 * Members tab (issue 48): counts by status, search and status filter, a member's page (subscription, history, comp and remove comp),
 * and for admins the plans and the members-only comments switch. Editors read; only `member.manage` changes anything.
 */
import { useId, useState, type FormEvent } from 'react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ApiRequestError, serverMessageOf } from '../../lib/api-client.ts';
import type { MemberSettings, MemberStatus } from '../../schemas/member.ts';
import type { AdminMember, AdminMemberDetail, MemberListing } from '../../schemas/member-admin.ts';
import { toast } from '../toast/toast-store.ts';
import { usePermissions } from '../auth/use-permissions.ts';
import { adminKeys, ADMIN_MEMBERS_PAGE_SIZE, invalidateMembers } from './admin-queries.ts';
import { formatDateTime, formatLongDate } from './admin-format.ts';
import { parseMoney, toMajorText } from './members-format.ts';
import { formatMoney } from '../../lib/money.ts';
import { Pagination } from './Pagination.tsx';
import { QueryFailure, SearchStatusFilter, Spinner, StatusBadge, toastFailure } from './AdminUi.tsx';

const STATUSES = [
  ['free', 'Free'],
  ['paid', 'Paid'],
  ['past-due', 'Past due'],
  ['comped', 'Comped'],
] as const satisfies readonly (readonly [MemberStatus, string])[];

/** GET /api/members/plans as the public contract answers it: prices in minor units (none before any are saved), `available` with Stripe. */
type PlansAnswer = { currency?: string; monthly?: number; yearly?: number; available: boolean };

/** "$5.00 a month" for a subscription or a plan. */
function planText(sub: { amount: number; currency: string; interval: 'month' | 'year' }): string {
  return `${formatMoney(sub.amount, sub.currency)} a ${sub.interval}`;
}

/** The member's plan in a few words beside their badge: "$5.00 a month", "until June 1, 2027" for a comp, or nothing. */
function rowPlan(member: AdminMember): string {
  if (member.status === 'comped') return member.comp?.until ? `until ${formatLongDate(member.comp.until)}` : '';
  if (member.status === 'free' || !member.subscription) return '';
  return planText(member.subscription);
}

/** The end of the chosen day in the browser's zone: a comp "until December 31" lasts through that day. */
function endOfDay(day: string): Date {
  return new Date(`${day}T23:59:59.999`);
}

function MemberDetail({ id, manage, panelId }: { id: string; manage: boolean; panelId: string }) {
  const client = useQueryClient();
  const member = useQuery<AdminMemberDetail>({ queryKey: adminKeys.member(id) });
  const [until, setUntil] = useState('');
  const comp = useMutation({
    mutationFn: (body: { until?: string }) => api.post<AdminMemberDetail>(`/api/members/${id}/comp`, body),
    onSuccess: (answer) => {
      toast({
        title: 'Subscription comped',
        description: `${answer.name || answer.email}: ${answer.comp?.until ? `until ${formatLongDate(answer.comp.until)}` : 'without an end date'}.`,
      });
      setUntil('');
    },
    onError: (error) => toastFailure(serverMessageOf(error, 'Failed to comp the subscription. Please try again.')),
    onSettled: () => invalidateMembers(client),
  });
  const uncomp = useMutation({
    mutationFn: () => api.delete<AdminMemberDetail>(`/api/members/${id}/comp`),
    onSuccess: (answer) => toast({ title: 'Comp removed', description: answer.name || answer.email }),
    onError: (error) => toastFailure(serverMessageOf(error, 'Failed to remove the comp. Please try again.')),
    onSettled: () => invalidateMembers(client),
  });

  const onComp = (event: FormEvent) => {
    event.preventDefault();
    if (!until) {
      comp.mutate({});
      return;
    }
    const end = endOfDay(until);
    if (Number.isNaN(end.getTime()) || end.getTime() <= Date.now()) {
      toastFailure('Choose an end date after today, or none.');
      return;
    }
    comp.mutate({ until: end.toISOString() });
  };

  if (member.isPending) return <Spinner label="Loading the member" />;
  if (member.isError) return <QueryFailure what="the member" onRetry={() => void member.refetch()} />;
  const m = member.data;
  const sub = m.subscription;
  const busy = comp.isPending || uncomp.isPending;
  return (
    <div id={panelId} className="adm-stack" data-testid="member-detail">
      <dl className="adm-facts">
        <div>
          <dt>Status</dt>
          <dd>
            <StatusBadge status={m.status} />
          </dd>
        </div>
        <div>
          <dt>Joined</dt>
          <dd>{formatLongDate(m.createdAt)}</dd>
        </div>
        <div>
          <dt>Last sign-in</dt>
          <dd>{m.lastSignInAt ? formatDateTime(m.lastSignInAt) : 'Never'}</dd>
        </div>
        <div>
          <dt>Newsletter</dt>
          <dd>{m.newsletter ? 'Yes' : 'No'}</dd>
        </div>
        <div>
          <dt>Subscription</dt>
          <dd>{sub ? `${planText(sub)} (${sub.status.replace('_', ' ')})` : 'None'}</dd>
        </div>
        {sub && (
          <div>
            <dt>{sub.endedAt ? 'Ended' : sub.cancelAtPeriodEnd ? 'Ends' : 'Renews'}</dt>
            <dd>{formatLongDate(sub.endedAt ?? sub.currentPeriodEnd)}</dd>
          </div>
        )}
        <div>
          <dt>Comp</dt>
          <dd>
            {m.comp
              ? `Since ${formatLongDate(m.comp.at)}${m.comp.until ? `, until ${formatLongDate(m.comp.until)}` : ', no end date'}`
              : 'None'}
          </dd>
        </div>
        {m.stripeCustomerId && (
          <div>
            <dt>Stripe customer</dt>
            <dd className="adm-mono">{m.stripeCustomerId}</dd>
          </div>
        )}
      </dl>

      {manage && (
        <form className="adm-filters" aria-label={`Comp for ${m.email}`} onSubmit={onComp} noValidate>
          <label className="adm-field">
            <span>Comp until (optional)</span>
            <input type="date" value={until} onChange={(e) => setUntil(e.target.value)} />
          </label>
          <div className="adm-actions adm-filters-actions">
            <button type="submit" className="adm-btn adm-btn-primary adm-btn-sm" disabled={busy}>
              Comp a subscription
            </button>
            {m.comp && (
              <button type="button" className="adm-btn adm-btn-outline adm-btn-sm" disabled={busy} onClick={() => uncomp.mutate()}>
                Remove comp
              </button>
            )}
          </div>
        </form>
      )}

      <h3 className="adm-card-title">History</h3>
      {m.history.length === 0 ? (
        <p className="adm-empty">Nothing recorded yet.</p>
      ) : (
        <ol className="adm-list" aria-label={`History of ${m.email}, newest first`}>
          {m.history.map((line, index) => (
            <li key={`${line.at}-${index}`} className="adm-row" data-testid="member-history-line">
              <div className="adm-row-main">
                <span>{line.text}</span>
                <div className="adm-meta">
                  <time dateTime={line.at}>{formatDateTime(line.at)}</time>
                </div>
              </div>
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

function PlansForm() {
  const client = useQueryClient();
  const plans = useQuery<PlansAnswer>({ queryKey: adminKeys.memberPlans() });
  const [draft, setDraft] = useState<{ currency: string; monthly: string; yearly: string } | undefined>();
  const headingId = useId();
  const saved = plans.data;
  const currency = saved?.currency ?? 'usd';
  const values = draft ?? {
    currency,
    monthly: saved?.monthly === undefined ? '' : toMajorText(saved.monthly, currency),
    yearly: saved?.yearly === undefined ? '' : toMajorText(saved.yearly, currency),
  };
  const change = (field: keyof typeof values) => (value: string) => setDraft({ ...values, [field]: value });
  const save = useMutation({
    mutationFn: (body: { currency: string; monthly: number; yearly: number }) => api.put<unknown>('/api/members/plans', body),
    onSuccess: (_answer, body) => {
      toast({
        title: 'Plans saved',
        description: `${formatMoney(body.monthly, body.currency)} a month, ${formatMoney(body.yearly, body.currency)} a year.`,
      });
      setDraft(undefined);
    },
    onError: (error) => toastFailure(serverMessageOf(error, 'Failed to save the plans. Please try again.')),
    onSettled: () => client.invalidateQueries({ queryKey: adminKeys.memberPlans() }),
  });
  const onSave = (event: FormEvent) => {
    event.preventDefault();
    const currency = values.currency.trim().toLowerCase();
    if (!/^[a-z]{3}$/.test(currency)) {
      toastFailure('A currency is a three-letter code, such as usd or eur.');
      return;
    }
    const monthly = parseMoney(values.monthly, currency);
    const yearly = parseMoney(values.yearly, currency);
    if (monthly === undefined || yearly === undefined) {
      toastFailure(`Enter both prices as amounts, such as ${toMajorText(500, currency)}.`);
      return;
    }
    save.mutate({ currency, monthly, yearly });
  };
  // No plans saved yet: the answer has no prices (or, without the plans endpoint, a 404), and the form starts empty.
  const missing =
    (plans.isError && plans.error instanceof ApiRequestError && plans.error.status === 404) ||
    (plans.isSuccess && saved?.currency === undefined);
  return (
    <section className="adm-card adm-stack" aria-labelledby={headingId} data-testid="member-plans">
      <h2 id={headingId} className="adm-card-title">
        Plans
      </h2>
      {plans.isPending ? (
        <Spinner label="Loading the plans" />
      ) : plans.isError && !missing ? (
        <QueryFailure what="the plans" onRetry={() => void plans.refetch()} />
      ) : (
        <p className="adm-muted" data-testid="plans-state">
          {missing
            ? 'No plans yet: set the prices readers pay.'
            : saved?.available
              ? 'Stripe is connected: readers can subscribe at these prices.'
              : 'Stripe is not connected: readers cannot subscribe until it is (docs/members.md says how).'}
        </p>
      )}
      <form className="adm-form" aria-label="Plans" onSubmit={onSave} noValidate>
        <label className="adm-field">
          <span>Currency</span>
          <input
            type="text"
            value={values.currency}
            onChange={(e) => change('currency')(e.target.value)}
            maxLength={3}
            autoComplete="off"
          />
        </label>
        <label className="adm-field">
          <span>Monthly price</span>
          <input
            type="text"
            inputMode="decimal"
            value={values.monthly}
            onChange={(e) => change('monthly')(e.target.value)}
            placeholder="5.00"
          />
        </label>
        <label className="adm-field">
          <span>Yearly price</span>
          <input
            type="text"
            inputMode="decimal"
            value={values.yearly}
            onChange={(e) => change('yearly')(e.target.value)}
            placeholder="50.00"
          />
        </label>
        <div className="adm-actions adm-filters-actions">
          <button type="submit" className="adm-btn adm-btn-primary" disabled={save.isPending}>
            Save plans
          </button>
        </div>
      </form>
    </section>
  );
}

function CommentsSetting() {
  const client = useQueryClient();
  const settings = useQuery<MemberSettings>({ queryKey: adminKeys.memberSettings() });
  const headingId = useId();
  const save = useMutation({
    mutationFn: (commentsMembersOnly: boolean) => api.put<MemberSettings>('/api/members/settings', { commentsMembersOnly }),
    onSuccess: (_answer, membersOnly) =>
      toast({ title: 'Setting saved', description: membersOnly ? 'Only members may comment now.' : 'Everyone may comment now.' }),
    onError: (error) => toastFailure(serverMessageOf(error, 'Failed to save the setting. Please try again.')),
    onSettled: () => client.invalidateQueries({ queryKey: adminKeys.memberSettings() }),
  });
  const checked = save.isPending ? save.variables : (settings.data?.commentsMembersOnly ?? false);
  return (
    <section className="adm-card adm-stack" aria-labelledby={headingId} data-testid="member-settings">
      <h2 id={headingId} className="adm-card-title">
        Comments
      </h2>
      {settings.isError && <QueryFailure what="the member settings" onRetry={() => void settings.refetch()} />}
      <label className="adm-switch adm-switch-row">
        <span>Comments: members only</span>
        <input
          type="checkbox"
          role="switch"
          checked={checked}
          disabled={!settings.data || save.isPending}
          onChange={(e) => save.mutate(e.target.checked)}
        />
        <span className="adm-switch-track" aria-hidden="true" />
      </label>
      <p className="adm-muted">When on, only signed-in members may comment, and their comments carry their name.</p>
    </section>
  );
}

export function MembersTab() {
  const { can } = usePermissions();
  const manage = can('member.manage');
  const [searchDraft, setSearchDraft] = useState('');
  const [q, setQ] = useState('');
  const [status, setStatus] = useState<'' | MemberStatus>('');
  const [page, setPage] = useState(1);
  const [open, setOpen] = useState<string | undefined>();
  const baseId = useId();
  const list = useQuery<MemberListing>({
    queryKey: adminKeys.members({ q: q.trim(), status, page, pageSize: ADMIN_MEMBERS_PAGE_SIZE }),
    placeholderData: keepPreviousData,
  });
  const applySearch = (event: FormEvent) => {
    event.preventDefault();
    setQ(searchDraft);
    setPage(1);
  };
  const totalPages = list.data ? Math.ceil(list.data.total / ADMIN_MEMBERS_PAGE_SIZE) : 0;
  const filtered = q.trim() !== '' || status !== '';

  return (
    <div className="adm-stack">
      <section aria-label="Member counts" className="adm-stats" data-testid="member-counts">
        {STATUSES.map(([key, label]) => (
          <div className="adm-card adm-stat" key={key} data-testid={`member-count-${key}`}>
            <span className="adm-stat-label">{label}</span>
            <span className="adm-stat-value">{list.data ? list.data.counts[key].toLocaleString('en-US') : list.isError ? '–' : '…'}</span>
          </div>
        ))}
      </section>

      <SearchStatusFilter
        what="members"
        placeholder="E-mail address or name..."
        draft={searchDraft}
        onDraft={setSearchDraft}
        status={status}
        statuses={STATUSES}
        onStatus={(next) => {
          setStatus(next);
          setPage(1);
        }}
        onSubmit={applySearch}
      />

      <p className="adm-muted" aria-live="polite" data-testid="member-total">
        {list.data ? `${list.data.total.toLocaleString('en-US')} ${list.data.total === 1 ? 'member' : 'members'}` : ''}
      </p>

      {list.isPending ? (
        <Spinner label="Loading members" />
      ) : list.isError ? (
        <QueryFailure what="members" onRetry={() => void list.refetch()} />
      ) : list.data.items.length === 0 ? (
        <p className="adm-empty">{filtered ? 'No members match this search.' : 'No members yet: readers appear here once they sign up.'}</p>
      ) : (
        <ul className="adm-list">
          {list.data.items.map((member) => {
            const expanded = open === member.id;
            const panelId = `${baseId}-member-${member.id}`;
            const plan = rowPlan(member);
            return (
              <li key={member.id} className="adm-card adm-stack" data-testid="admin-member" data-email={member.email}>
                <div className="adm-comment-head">
                  <button
                    type="button"
                    className="adm-btn adm-btn-ghost adm-break"
                    aria-expanded={expanded}
                    aria-controls={expanded ? panelId : undefined}
                    onClick={() => setOpen(expanded ? undefined : member.id)}
                  >
                    {member.name ? `${member.name} (${member.email})` : member.email}
                  </button>
                  <div className="adm-meta">
                    <StatusBadge status={member.status} />
                    {plan && <span>{plan}</span>}
                    <span>
                      Joined <time dateTime={member.createdAt}>{formatLongDate(member.createdAt)}</time>
                    </span>
                  </div>
                </div>
                {expanded && <MemberDetail id={member.id} manage={manage} panelId={panelId} />}
              </li>
            );
          })}
        </ul>
      )}

      <Pagination page={page} totalPages={totalPages} onChange={setPage} label="Member pages" />

      {manage && (
        <div className="adm-chart-grid">
          <PlansForm />
          <CommentsSetting />
        </div>
      )}
    </div>
  );
}
