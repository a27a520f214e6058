/** The admin's side of members (issue 48): the list with its counts, one member's record and history, and comps granted by staff. */
import type { z } from 'zod';
import {
  MEMBER_STATUSES,
  memberStatus,
  type Member,
  type MemberStatus,
  type memberCompInputSchema,
  type memberListQuerySchema,
  publicSubscriptionOf,
} from '../../schemas/member.ts';
import type { AdminMember, AdminMemberDetail, MemberListing } from '../../schemas/member-admin.ts';
import type { User } from '../../schemas/auth.ts';
import { recordAudit } from '../audit.ts';
import { newsroomDay } from '../calendar.ts';
import { nowIso, nowMs } from '../clock.ts';
import { badRequest, conflict, notFound } from '../errors.ts';
import { maskEmail } from '../log.ts';
import type { Runtime } from '../runtime.ts';
import { appendHistory } from './history.ts';

export type MemberListQuery = z.output<typeof memberListQuerySchema>;
export type MemberCompInput = z.output<typeof memberCompInputSchema>;
/** The staff user making a change: the history keeps the id, the audit log the id and username. */
export type StaffActor = Pick<User, 'id' | 'username'>;

/** A member as the list shows them, at `now`. */
export function toAdminMember(member: Member, now: number): AdminMember {
  const sub = member.subscription;
  return {
    id: member.id,
    email: member.email,
    name: member.name,
    newsletter: member.newsletter,
    createdAt: member.createdAt,
    ...(member.lastSignInAt ? { lastSignInAt: member.lastSignInAt } : {}),
    status: memberStatus(member, now),
    ...(sub ? { subscription: publicSubscriptionOf(sub) } : {}),
    ...(member.comp ? { comp: { at: member.comp.at, ...(member.comp.until ? { until: member.comp.until } : {}) } } : {}),
  };
}

/** A member's page: the record without Stripe's bookkeeping (event ids, sync times), history newest first. */
export function toAdminMemberDetail(member: Member, now: number): AdminMemberDetail {
  const { subscription: _listed, comp: _comp, ...summary } = toAdminMember(member, now);
  const detail: AdminMemberDetail = {
    ...summary,
    history: member.history.map(({ stripeEventId: _eventId, ...line }) => line).reverse(),
  };
  if (member.subscription) {
    const { id: _subscriptionId, syncedAt: _syncedAt, ...subscription } = member.subscription;
    detail.subscription = subscription;
  }
  if (member.stripeCustomerId) detail.stripeCustomerId = member.stripeCustomerId;
  if (member.comp) detail.comp = { ...member.comp };
  return detail;
}

export async function listMembers(runtime: Runtime, query: MemberListQuery): Promise<MemberListing> {
  const now = nowMs();
  const members = runtime.store.members;
  const [page, ...perStatus] = await Promise.all([
    members.list({ q: query.q, status: query.status }, { offset: (query.page - 1) * query.pageSize, limit: query.pageSize }, now),
    // Only the totals: a page of none.
    ...MEMBER_STATUSES.map((status) => members.list({ status }, { offset: 0, limit: 0 }, now)),
  ]);
  const counts = Object.fromEntries(MEMBER_STATUSES.map((status, i) => [status, perStatus[i]!.total])) as Record<MemberStatus, number>;
  return {
    items: page.items.map((member) => toAdminMember(member, now)),
    total: page.total,
    page: query.page,
    pageSize: query.pageSize,
    counts,
  };
}

export async function getMember(runtime: Runtime, id: string): Promise<AdminMemberDetail> {
  const member = await runtime.store.members.get(id);
  if (!member) throw notFound('Member');
  return toAdminMemberDetail(member, nowMs());
}

/** The audit log's name for a member: the masked address, so the log holds no one's e-mail after they leave. */
function auditTarget(member: Member) {
  return { type: 'member' as const, id: member.id, label: maskEmail(member.email) };
}

/** Grants (or replaces) a comp: the paid level at no charge, until a date or without end. */
export async function grantComp(runtime: Runtime, id: string, input: MemberCompInput, actor: StaffActor): Promise<AdminMemberDetail> {
  const now = nowMs();
  if (input.until !== undefined && Date.parse(input.until) <= now)
    throw badRequest('The end date of a comp must be in the future', [{ path: ['until'], message: 'Choose a date after today' }]);
  const at = nowIso();
  const untilDay = input.until === undefined ? undefined : newsroomDay(Date.parse(input.until), runtime.config.BRIEFING_TZ);
  const until = input.until === undefined ? undefined : new Date(input.until).toISOString();
  const changed = await runtime.store.members.mutate(id, (member) => ({
    ...member,
    comp: { at, by: actor.id, ...(until ? { until } : {}) },
    history: appendHistory(
      member.history,
      {
        at,
        kind: 'comp-granted',
        text: `${actor.username} comped a paid subscription ${untilDay ? `until ${untilDay}` : 'without an end date'}.`,
        by: actor.id,
      },
      now,
    ),
  }));
  if (!changed) throw notFound('Member');
  await recordAudit(runtime, {
    actor,
    action: 'member.comp-grant',
    target: auditTarget(changed),
    detail: untilDay ? `until ${untilDay}` : 'without an end date',
  });
  return toAdminMemberDetail(changed, now);
}

/** Ends a comp now; a member without one is a 409 (nothing is written). */
export async function removeComp(runtime: Runtime, id: string, actor: StaffActor): Promise<AdminMemberDetail> {
  const now = nowMs();
  const at = nowIso();
  let hadComp = false;
  const after = await runtime.store.members.mutate(id, (member) => {
    if (!member.comp) return undefined;
    hadComp = true;
    const { comp: _comp, ...rest } = member;
    return {
      ...rest,
      history: appendHistory(
        member.history,
        { at, kind: 'comp-removed', text: `${actor.username} removed the comped subscription.`, by: actor.id },
        now,
      ),
    };
  });
  if (!after) throw notFound('Member');
  if (!hadComp) throw conflict('This member has no comped subscription to remove');
  await recordAudit(runtime, { actor, action: 'member.comp-remove', target: auditTarget(after) });
  return toAdminMemberDetail(after, now);
}
