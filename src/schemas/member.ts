/** Members (issue 48): reader accounts, their subscription as Stripe reports it, and who may read a gated story. */
import { z } from './zod.ts';
import { emptyToUndefined } from './common.ts';

/** Who may read an article's whole body: everyone, any signed-in member, or paying members only. */
export const ACCESS_LEVELS = ['public', 'members', 'paid'] as const;
export const accessSchema = z.enum(ACCESS_LEVELS, { error: `Expected an access level: ${ACCESS_LEVELS.join(', ')}` });
export type Access = z.infer<typeof accessSchema>;

/** What a reader is: not signed in, a free member, or a paying (or comped) one. */
export type ReaderLevel = 'anonymous' | 'free' | 'paid';

export const memberEmailSchema = z
  .string()
  .trim()
  .toLowerCase()
  .max(254, 'Email is at most 254 characters')
  .pipe(z.email('Please enter a valid email address.'));

export const memberNameSchema = z.string().trim().max(100, 'A name is at most 100 characters');

/** Stripe's subscription states, as its API spells them. */
export const SUBSCRIPTION_STATUSES = [
  'incomplete',
  'incomplete_expired',
  'trialing',
  'active',
  'past_due',
  'canceled',
  'unpaid',
  'paused',
] as const;
export const BILLING_INTERVALS = ['month', 'year'] as const;
export const billingIntervalSchema = z.enum(BILLING_INTERVALS, { error: 'Expected month or year' });
export type BillingInterval = z.infer<typeof billingIntervalSchema>;

/** A member's paid subscription as the last Stripe event (or lookup) described it; times are ISO strings. */
export const memberSubscriptionSchema = z.object({
  /** Stripe's subscription id (sub_...). */
  id: z.string(),
  status: z.enum(SUBSCRIPTION_STATUSES),
  interval: billingIntervalSchema,
  /** Price in the currency's minor unit (cents), per interval. */
  amount: z.number().int().min(0),
  /** ISO 4217, lower case as Stripe writes it. */
  currency: z.string(),
  startedAt: z.string(),
  currentPeriodEnd: z.string(),
  cancelAtPeriodEnd: z.boolean(),
  /** When a renewal first failed (status past_due); the grace period counts from here. */
  pastDueSince: z.string().optional(),
  endedAt: z.string().optional(),
  /** Stripe's `created` of the newest event applied (ISO): an older event never overwrites a newer state. */
  syncedAt: z.string(),
});
export type MemberSubscription = z.infer<typeof memberSubscriptionSchema>;

/** One line of a member's history (the admin's member page); `stripeEventId` makes a webhook's effect happen once. */
export const memberEventSchema = z.object({
  at: z.string(),
  kind: z.enum([
    'signed-up',
    'signed-in',
    'profile-changed',
    'subscription-started',
    'subscription-changed',
    'subscription-ended',
    'payment-succeeded',
    'payment-failed',
    'comp-granted',
    'comp-removed',
  ]),
  /** One sentence for people ("Paid $5.00 for the monthly plan"). */
  text: z.string(),
  stripeEventId: z.string().optional(),
  /** Staff user id for changes made in the admin. */
  by: z.string().optional(),
});
export type MemberEvent = z.infer<typeof memberEventSchema>;

/** A complimentary paid level granted by staff; `until` absent = no end. */
export const memberCompSchema = z.object({ at: z.string(), by: z.string(), until: z.string().optional() });

export const memberSchema = z.object({
  id: z.string(),
  /** Lower case; unique. */
  email: z.string(),
  name: z.string(),
  /** Whether the member takes the newsletter (kept in step with the subscriber list). */
  newsletter: z.boolean(),
  createdAt: z.string(),
  lastSignInAt: z.string().optional(),
  /** Stripe's customer id (cus_...), set when the member first starts a checkout. */
  stripeCustomerId: z.string().optional(),
  subscription: memberSubscriptionSchema.optional(),
  comp: memberCompSchema.optional(),
  /** Oldest first; bounded by MEMBER_HISTORY_LIMIT (the oldest lines go first, never a Stripe event id younger than 30 days). */
  history: z.array(memberEventSchema),
});
export type Member = z.infer<typeof memberSchema>;

export const MEMBER_HISTORY_LIMIT = 500;

/** How the admin's list filters members (derived from the record and the clock by memberStatus). */
export const MEMBER_STATUSES = ['free', 'paid', 'past-due', 'comped'] as const;
export const memberStatusSchema = z.enum(MEMBER_STATUSES, { error: `Expected a status: ${MEMBER_STATUSES.join(', ')}` });
export type MemberStatus = z.infer<typeof memberStatusSchema>;
export type MemberFilter = { q?: string | undefined; status?: MemberStatus | undefined };

/** Days a member keeps the paid level after a renewal fails (Stripe retries the card meanwhile). */
export const PAST_DUE_GRACE_DAYS = 7;
const DAY_MS = 86_400_000;

function compActive(member: Member, now: number): boolean {
  return member.comp !== undefined && (member.comp.until === undefined || Date.parse(member.comp.until) > now);
}

/** The one rule for a member's standing at `now` (ms since the epoch). */
export function memberStatus(member: Member, now: number): MemberStatus {
  if (compActive(member, now)) return 'comped';
  const sub = member.subscription;
  if (!sub) return 'free';
  const periodEnd = Date.parse(sub.currentPeriodEnd);
  if (sub.status === 'active' || sub.status === 'trialing') return periodEnd > now || !sub.cancelAtPeriodEnd ? 'paid' : 'free';
  if (sub.status === 'past_due') {
    const since = Date.parse(sub.pastDueSince ?? sub.currentPeriodEnd);
    return since + PAST_DUE_GRACE_DAYS * DAY_MS > now ? 'past-due' : 'free';
  }
  return 'free';
}

/** Whether a member matches the admin list's filter at `now`: e-mail or name contains q, and the status. */
export function matchesMemberFilter(member: Member, filter: MemberFilter, now: number): boolean {
  const q = filter.q?.toLowerCase();
  if (q && !member.email.includes(q) && !member.name.toLowerCase().includes(q)) return false;
  return !filter.status || memberStatus(member, now) === filter.status;
}

/** The reading level that status gives: past due keeps paid access through the grace period. */
export function readerLevelOf(member: Member | undefined, now: number): ReaderLevel {
  if (!member) return 'anonymous';
  return memberStatus(member, now) === 'free' ? 'free' : 'paid';
}

/** Whether a reader of that level may read the whole of an article with that access. */
export function canReadAccess(access: Access | undefined, level: ReaderLevel): boolean {
  if (!access || access === 'public') return true;
  if (access === 'members') return level !== 'anonymous';
  return level === 'paid';
}

/** Plans as the admin sets them (prices in the minor unit); `stripe` holds the ids of the Prices made for them. */
export const membershipPlansSchema = z.object({
  currency: z.string().regex(/^[a-z]{3}$/),
  monthly: z.number().int().min(0),
  yearly: z.number().int().min(0),
  /** Stripe's product and prices for these amounts (made when the plans are saved with Stripe connected). */
  stripe: z.object({ productId: z.string(), monthlyPriceId: z.string(), yearlyPriceId: z.string() }).optional(),
  updatedAt: z.string(),
});
export type MembershipPlans = z.infer<typeof membershipPlansSchema>;

/** PUT /api/members/plans */
export const membershipPlansInputSchema = z.strictObject({
  currency: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-z]{3}$/, 'A currency is a three-letter ISO 4217 code, such as usd or eur'),
  monthly: z.number().int('Prices are in cents').min(50, 'A price is at least 50 cents').max(1_000_000),
  yearly: z.number().int('Prices are in cents').min(50, 'A price is at least 50 cents').max(10_000_000),
});

/** Settings of members beside the plans (the admin's Members tab). */
export const memberSettingsSchema = z.strictObject({
  /** Only signed-in members may comment; their comments carry their name. */
  commentsMembersOnly: z.boolean(),
});
export type MemberSettings = z.infer<typeof memberSettingsSchema>;

/** POST /api/members/sign-in: one link serves sign-up and sign-in. */
export const memberSignInInputSchema = z.strictObject({
  email: memberEmailSchema,
  /** Only used when the address has no account yet. */
  name: z.preprocess(emptyToUndefined, memberNameSchema.optional()),
  newsletter: z.boolean().optional(),
  /** A path on this site to return to after the link is followed. */
  next: z.preprocess(
    emptyToUndefined,
    z
      .string()
      .max(500)
      .regex(/^\/(?!\/)[^\s\\]*$/, 'Expected a path on this site')
      .optional(),
  ),
});
export type MemberSignInInput = z.infer<typeof memberSignInInputSchema>;

/** PATCH /api/members/me */
export const memberProfileInputSchema = z
  .strictObject({ name: memberNameSchema.optional(), newsletter: z.boolean().optional() })
  .refine((p) => p.name !== undefined || p.newsletter !== undefined, 'Nothing to change: send name or newsletter');

/** The signed-in member as GET /api/members/me answers it. */
export type PublicMember = {
  id: string;
  email: string;
  name: string;
  newsletter: boolean;
  createdAt: string;
  status: MemberStatus;
  level: Exclude<ReaderLevel, 'anonymous'>;
  subscription?: Pick<MemberSubscription, 'status' | 'interval' | 'amount' | 'currency' | 'currentPeriodEnd' | 'cancelAtPeriodEnd'>;
};

/** The part of a subscription a member and the admin's list are shown (no Stripe ids, no sync times). */
export function publicSubscriptionOf(sub: MemberSubscription): NonNullable<PublicMember['subscription']> {
  const { status, interval, amount, currency, currentPeriodEnd, cancelAtPeriodEnd } = sub;
  return { status, interval, amount, currency, currentPeriodEnd, cancelAtPeriodEnd };
}

/** GET /api/members (admin) query. */
export const memberListQuerySchema = z.object({
  q: z.preprocess(emptyToUndefined, z.string().trim().max(254).optional()),
  status: z.preprocess(emptyToUndefined, memberStatusSchema.optional()),
  page: z.coerce.number().int().min(1).max(100_000).default(1),
  pageSize: z.coerce.number().int().min(1).max(100).default(25),
});

/** POST /api/members/{id}/comp: grant a complimentary paid level (until a date, or without end). */
export const memberCompInputSchema = z.strictObject({
  until: z.preprocess(emptyToUndefined, z.iso.datetime({ offset: true }).optional()),
});
