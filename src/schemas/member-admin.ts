/** The admin's Members API (issue 48): what the list, a member's page and the Overview's member figures answer, and the stats query. */
import type { z } from './zod.ts';
import { summaryQuerySchema } from './analytics.ts';
import type { MemberEvent, MemberStatus, MemberSubscription } from './member.ts';

/** A member as staff see them in the list: no history, no Stripe ids, no sync bookkeeping. */
export type AdminMember = {
  id: string;
  email: string;
  name: string;
  newsletter: boolean;
  createdAt: string;
  lastSignInAt?: string;
  /** memberStatus at the time of the answer. */
  status: MemberStatus;
  subscription?: Pick<MemberSubscription, 'status' | 'interval' | 'amount' | 'currency' | 'currentPeriodEnd' | 'cancelAtPeriodEnd'>;
  comp?: { at: string; until?: string };
};

/** GET /api/members/{id}: the member, their subscription in full and their history, newest line first. */
export type AdminMemberDetail = Omit<AdminMember, 'subscription' | 'comp'> & {
  subscription?: Omit<MemberSubscription, 'id' | 'syncedAt'>;
  /** Stripe's customer id (cus_...): staff look the customer up in Stripe's dashboard with it. */
  stripeCustomerId?: string;
  comp?: { at: string; by: string; until?: string };
  history: Omit<MemberEvent, 'stripeEventId'>[];
};

/** GET /api/members */
export type MemberListing = {
  items: AdminMember[];
  total: number;
  page: number;
  pageSize: number;
  /** Every member by status now, whatever the search. */
  counts: Record<MemberStatus, number>;
};

/** GET /api/members/stats?from&to: the analytics' range (newsroom days, inclusive; 30 days to today by default). */
export const memberStatsQuerySchema = summaryQuerySchema.pick({ from: true, to: true });
export type MemberStatsQuery = z.infer<typeof memberStatsQuerySchema>;

/** One newsroom day, as it stood at its end (today: now). */
export type MemberStatsDay = {
  day: string;
  /** Members with an account. */
  members: number;
  /** Members paying through a subscription: paid, or past due within the grace period. */
  paying: number;
  /** Members with a comp who do not also pay (comped members pay nothing: no MRR). */
  comped: number;
  /** Monthly recurring revenue of the paying members' subscriptions (yearly / 12), in the minor unit of `currency`. */
  mrr: number;
};

export type MemberStats = {
  timeZone: string;
  from: string;
  to: string;
  /** The plans' currency (ISO 4217, lower case); subscriptions in another currency are not in `mrr`. */
  currency: string;
  days: MemberStatsDay[];
  /** Paying members today whose subscription is in another currency than the plans' (left out of `mrr`). */
  otherCurrency: number;
};
