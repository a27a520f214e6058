/** Newsletter subscriptions, the morning briefing's send log and the dashboard's subscriber list. */
import { z } from './zod.ts';
import { emptyToUndefined } from './common.ts';

const emailSchema = z
  .string()
  .trim()
  .toLowerCase()
  .max(254, 'Email is at most 254 characters')
  .pipe(z.email('Please enter a valid email address.'));

export const subscribeInputSchema = z.strictObject({ email: emailSchema });

/**
 * A stored subscription. `token` is the random unsubscribe token (it goes into every briefing, so it
 * is kept; lookups go through its SHA-256). A pending sign-up carries `confirmTokenHash` and no
 * `confirmedAt`. Records written before double opt-in have neither field and read as confirmed.
 */
export const subscriberSchema = z.object({
  id: z.string(),
  email: z.string(),
  token: z.string(),
  createdAt: z.string(),
  unsubscribedAt: z.string().optional(),
  confirmedAt: z.string().optional(),
  /** SHA-256 (hex) of the one-time confirmation token; the token itself is only in the mail. */
  confirmTokenHash: z.string().optional(),
  confirmExpiresAt: z.string().optional(),
  confirmSentAt: z.string().optional(),
});
export type Subscriber = z.infer<typeof subscriberSchema>;

export const SUBSCRIBER_STATUSES = ['confirmed', 'pending', 'unsubscribed'] as const;
export const subscriberStatusSchema = z.enum(SUBSCRIBER_STATUSES);
export type SubscriberStatus = z.infer<typeof subscriberStatusSchema>;

/** The one rule for a subscription's state; legacy records (no confirmation fields) are confirmed. */
export function subscriberStatus(subscriber: Subscriber): SubscriberStatus {
  if (subscriber.unsubscribedAt) return 'unsubscribed';
  if (subscriber.confirmTokenHash && !subscriber.confirmedAt) return 'pending';
  return 'confirmed';
}

const tokenSchema = z
  .string()
  .min(16)
  .max(128)
  .regex(/^[a-z0-9]+$/);
export const unsubscribeQuerySchema = z.object({ token: tokenSchema });
export const confirmQuerySchema = z.object({ token: tokenSchema });

/** GET /api/newsletter/subscribers query. */
export const subscriberListQuerySchema = z.object({
  q: z.preprocess(emptyToUndefined, z.string().trim().max(254).optional()),
  status: z.preprocess(emptyToUndefined, subscriberStatusSchema.optional()),
  page: z.coerce.number().int().min(1).max(100_000).default(1),
  pageSize: z.coerce.number().int().min(1).max(100).default(25),
});
export type SubscriberListQuery = z.infer<typeof subscriberListQuerySchema>;
export type SubscriberFilter = { q?: string | undefined; status?: SubscriberStatus | undefined };

/** A subscriber as the dashboard sees it (no tokens). */
export type PublicSubscriber = {
  id: string;
  email: string;
  status: SubscriberStatus;
  createdAt: string;
  confirmedAt?: string | undefined;
  unsubscribedAt?: string | undefined;
};
export type SubscriberCounts = Record<SubscriberStatus, number>;

/** One briefing send: a day's run (or a forced re-send), resumable from its per-recipient log. */
export const briefingRunSchema = z.object({
  id: z.string(),
  /** The day it belongs to, YYYY-MM-DD in BRIEFING_TZ. */
  date: z.string(),
  forced: z.boolean(),
  trigger: z.enum(['schedule', 'script']),
  status: z.enum(['sending', 'sent']),
  startedAt: z.string(),
  finishedAt: z.string().optional(),
  /** Articles since this instant are in the digest (the previous briefing's start). */
  since: z.string(),
  subject: z.string(),
  articleIds: z.array(z.string()),
  recipients: z.number().int(),
  sent: z.number().int(),
  failed: z.number().int(),
  /** Recipients whose send was interrupted between "attempting" and "sent": never retried. */
  unknown: z.number().int(),
});
export type BriefingRun = z.infer<typeof briefingRunSchema>;

/** A recipient's state in a run; `attempting` is flushed to disk before the SMTP transaction starts. */
export type Delivery = {
  subscriberId: string;
  state: 'attempting' | 'sent' | 'failed';
  at: string;
  error?: string;
  messageId?: string;
  /** A failure where the message certainly did not go out (refused for now, server unreachable): the next run tries again. */
  retry?: boolean;
};

/** GET /api/newsletter/subscribers: a page of subscribers, the counts by status and the last briefing. */
export type SubscriberListing = {
  items: PublicSubscriber[];
  total: number;
  page: number;
  pageSize: number;
  counts: SubscriberCounts;
  lastBriefing: Pick<
    BriefingRun,
    'date' | 'startedAt' | 'finishedAt' | 'status' | 'recipients' | 'sent' | 'failed' | 'unknown' | 'forced'
  > | null;
};

/** What a briefing run reports (API, script, dashboard). */
export type BriefingSummary = {
  date: string;
  runId: string | undefined;
  /**
   * `sent`: this call sent (or resumed) it; `already-sent`: today's briefing was out before; `no-subscribers`/`no-articles`: nothing to
   * send.
   */
  outcome: 'sent' | 'already-sent' | 'no-subscribers' | 'no-articles';
  recipients: number;
  sent: number;
  skipped: number;
  failed: number;
  unknown: number;
};

export const testCopyInputSchema = z.strictObject({ email: emailSchema });
export const briefingRunInputSchema = z.strictObject({ force: z.boolean().default(false) });
