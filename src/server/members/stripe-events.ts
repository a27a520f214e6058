/**
 * Stripe's webhooks (issue 48): each event verified, matched to a member and applied once, in any order, a
 * replay changing nothing; the member's subscription kept as Stripe has it now.
 */
import type Stripe from 'stripe';
import type { Runtime } from '../runtime.ts';
import {
  PAST_DUE_GRACE_DAYS,
  SUBSCRIPTION_STATUSES,
  type BillingInterval,
  type Member,
  type MemberEvent,
  type MemberSubscription,
} from '../../schemas/member.ts';
import { AppError, ServiceUnavailableError } from '../errors.ts';
import { nowMs } from '../clock.ts';
import { formatMoney } from '../../lib/money.ts';
import { sendWithinBudget } from '../mail/transport.ts';
import { useMailer } from '../mail/mailer.ts';
import { appendHistory } from './history.ts';
import { callStripe, useStripe, type StripeConnection } from './stripe-client.ts';
import { formatMailDate, renderPaymentFailedMail, renderReceiptMail, type BillingMailContent } from './billing-mails.ts';

const DAY_MS = 86_400_000;
/** Times a webhook re-reads Stripe when another event of the member was written between its read and its write. */
const WEBHOOK_ATTEMPTS = 5;

/** The events this site acts on (docs/members.md lists them for Stripe's dashboard); any other is answered 200 and ignored. */
export const HANDLED_EVENTS = [
  'checkout.session.completed',
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'invoice.payment_succeeded',
  'invoice.payment_failed',
] as const;
type HandledEvent = Extract<Stripe.Event, { type: (typeof HANDLED_EVENTS)[number] }>;

function isHandled(event: Stripe.Event): event is HandledEvent {
  return (HANDLED_EVENTS as readonly string[]).includes(event.type);
}

/** What a handled event is about: the Stripe customer, the subscription, and our member id when Stripe carries it. */
type EventFacts = { customerId?: string; subscriptionId?: string; memberIdHints: string[] };

function idOf(value: string | { id: string } | null | undefined): string | undefined {
  if (!value) return undefined;
  return typeof value === 'string' ? value : value.id;
}

function factsOf(event: HandledEvent): EventFacts | undefined {
  switch (event.type) {
    case 'checkout.session.completed': {
      const session = event.data.object;
      if (session.mode !== 'subscription') return undefined;
      return {
        customerId: idOf(session.customer),
        subscriptionId: idOf(session.subscription),
        memberIdHints: [session.metadata?.member_id, session.client_reference_id].filter((id): id is string => Boolean(id)),
      };
    }
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted': {
      const subscription = event.data.object;
      return {
        customerId: idOf(subscription.customer),
        subscriptionId: subscription.id,
        memberIdHints: subscription.metadata?.member_id ? [subscription.metadata.member_id] : [],
      };
    }
    case 'invoice.payment_succeeded':
    case 'invoice.payment_failed': {
      const invoice = event.data.object;
      const details = invoice.parent?.subscription_details;
      const subscriptionId = idOf(details?.subscription);
      // An invoice of no subscription (a one-off charge) is none of the membership's business.
      if (!subscriptionId) return undefined;
      return {
        customerId: idOf(invoice.customer),
        subscriptionId,
        memberIdHints: details?.metadata?.member_id ? [details.metadata.member_id] : [],
      };
    }
  }
}

/** The member an event is about: by the stored customer id, else by the member id on the object, the customer or the session. */
async function findMember(runtime: Runtime, stripe: StripeConnection, facts: EventFacts): Promise<Member | undefined> {
  const { members } = runtime.store;
  if (facts.customerId) {
    const byCustomer = await members.getByStripeCustomer(facts.customerId);
    if (byCustomer) return byCustomer;
  }
  const hints = [...facts.memberIdHints];
  if (facts.customerId) {
    const customerId = facts.customerId;
    const customer = await callStripe('look up a customer', () => stripe.api.customers.retrieve(customerId));
    if (!customer.deleted && customer.metadata.member_id) hints.splice(0, 0, customer.metadata.member_id);
  }
  for (const id of hints) {
    const member = await members.get(id);
    // A member whose billing account is another customer is not this event's member.
    if (member && (!member.stripeCustomerId || member.stripeCustomerId === facts.customerId)) return member;
  }
  return undefined;
}

function isoOfSeconds(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

/** Stripe's status in our terms; undefined for one newer than this code. */
function statusOf(status: string): MemberSubscription['status'] | undefined {
  return (SUBSCRIPTION_STATUSES as readonly string[]).includes(status) ? (status as MemberSubscription['status']) : undefined;
}

/** Statuses after which Stripe never bills the subscription again. */
function hasEnded(status: MemberSubscription['status']): boolean {
  return status === 'canceled' || status === 'incomplete_expired';
}

/**
 * A subscription as Stripe describes it, in our shape; undefined for one this site did not sell (no
 * item, or an interval other than month or year).
 */
function subscriptionStateOf(
  subscription: Stripe.Subscription,
  previous: MemberSubscription | undefined,
  eventAt: string,
): MemberSubscription | undefined {
  const item = subscription.items.data[0];
  const raw = item?.price.recurring?.interval;
  const interval: BillingInterval | undefined = raw === 'month' ? 'month' : raw === 'year' ? 'year' : undefined;
  const status = statusOf(subscription.status);
  if (!item || !interval || !status) return undefined;
  const periodEnd = item.current_period_end;
  const sameAsBefore = previous?.id === subscription.id ? previous : undefined;
  const syncedAt = sameAsBefore && sameAsBefore.syncedAt > eventAt ? sameAsBefore.syncedAt : eventAt;
  return {
    id: subscription.id,
    status,
    interval,
    amount: (item.price.unit_amount ?? 0) * (item.quantity ?? 1),
    currency: item.price.currency,
    startedAt: isoOfSeconds(subscription.start_date),
    currentPeriodEnd: isoOfSeconds(periodEnd),
    // The portal may cancel by a date (cancel_at) rather than the flag: at or before the period's end it is the same.
    cancelAtPeriodEnd: subscription.cancel_at_period_end || (subscription.cancel_at !== null && subscription.cancel_at <= periodEnd),
    // The grace period counts from the first failure, not from each retry's event.
    ...(status === 'past_due' && { pastDueSince: sameAsBefore?.pastDueSince ?? eventAt }),
    ...(subscription.ended_at !== null && { endedAt: isoOfSeconds(subscription.ended_at) }),
    syncedAt,
  };
}

/** Whether an incoming subscription replaces the stored one: the same one, or a live one over an ended or absent one. */
function replacesStored(stored: MemberSubscription | undefined, incoming: MemberSubscription): boolean {
  if (!stored || stored.id === incoming.id) return true;
  return hasEnded(stored.status) || !hasEnded(incoming.status);
}

/** A JSON value with its keys sorted, to compare records whatever order a store wrote their keys in. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v,
  );
}

function planName(interval: BillingInterval): string {
  return interval === 'year' ? 'yearly' : 'monthly';
}

const STATUS_WORDS: Record<MemberSubscription['status'], string> = {
  incomplete: 'waiting for its first payment',
  incomplete_expired: 'expired before its first payment',
  trialing: 'in its trial',
  active: 'active',
  past_due: 'past due: a renewal payment failed',
  canceled: 'cancelled',
  unpaid: 'unpaid',
  paused: 'paused',
};

/** The history line of an event: one sentence for people, from the event's own snapshot and the plan it concerns. */
function historyLineOf(runtime: Runtime, event: HandledEvent, state: MemberSubscription | undefined, at: string): MemberEvent {
  const plan = state ? `the ${planName(state.interval)} plan` : 'the membership';
  const base = { at, stripeEventId: event.id };
  switch (event.type) {
    case 'checkout.session.completed':
      return { ...base, kind: 'subscription-started', text: `Subscribed to ${plan} through Stripe Checkout.` };
    case 'customer.subscription.created': {
      const price = state ? ` at ${formatMoney(state.amount, state.currency)} a ${state.interval}` : '';
      return { ...base, kind: 'subscription-started', text: `Stripe started a subscription to ${plan}${price}.` };
    }
    case 'customer.subscription.updated': {
      const snapshot = event.data.object;
      const item = snapshot.items.data[0];
      const ending = snapshot.cancel_at_period_end || snapshot.cancel_at !== null;
      if (ending && snapshot.status === 'active') {
        const end = snapshot.cancel_at ?? item?.current_period_end;
        const when = end ? ` on ${formatMailDate(runtime.config, isoOfSeconds(end))}` : ' at the end of the paid period';
        return { ...base, kind: 'subscription-changed', text: `Set the subscription to ${plan} to end${when}.` };
      }
      return {
        ...base,
        kind: 'subscription-changed',
        text: `The subscription to ${plan} is ${STATUS_WORDS[statusOf(snapshot.status) ?? 'active'] ?? snapshot.status}.`,
      };
    }
    case 'customer.subscription.deleted':
      return { ...base, kind: 'subscription-ended', text: `The subscription to ${plan} ended.` };
    case 'invoice.payment_succeeded': {
      const invoice = event.data.object;
      return { ...base, kind: 'payment-succeeded', text: `Paid ${formatMoney(invoice.amount_paid, invoice.currency)} for ${plan}.` };
    }
    case 'invoice.payment_failed': {
      const invoice = event.data.object;
      return {
        ...base,
        kind: 'payment-failed',
        text: `A payment of ${formatMoney(invoice.amount_due, invoice.currency)} for ${plan} failed.`,
      };
    }
  }
}

/** The subscription as Stripe has it now (then the order events arrive in does not matter); undefined when Stripe no longer knows it. */
async function retrieveSubscription(stripe: StripeConnection, id: string): Promise<Stripe.Subscription | undefined> {
  try {
    return await callStripe('look up a subscription', () => stripe.api.subscriptions.retrieve(id));
  } catch (error) {
    const code = (error as { cause?: { code?: unknown } }).cause?.code;
    if (code === 'resource_missing') return undefined;
    throw error;
  }
}

/** The event's own snapshot of the subscription, for when Stripe cannot be asked (applied only if newer than what is stored). */
function snapshotOf(event: HandledEvent): Stripe.Subscription | undefined {
  return event.type.startsWith('customer.subscription.') ? (event.data.object as Stripe.Subscription) : undefined;
}

export type WebhookResult = { outcome: 'applied' | 'duplicate' | 'ignored'; memberId?: string };

/**
 * Verifies and applies one webhook delivery. The signature is checked on the exact bytes Stripe sent (a
 * bad or old one is a 400 and nothing is stored); an event is applied to its member once, recorded by
 * its id in the member's history in the same write, and the subscription is stored as Stripe has it
 * now, so events may come in any order, twice, or days late.
 */
export async function handleStripeWebhook(runtime: Runtime, payload: Uint8Array, signature: string | null): Promise<WebhookResult> {
  const stripe = useStripe(runtime);
  if (!stripe)
    throw new ServiceUnavailableError('Paid subscriptions are not set up: this site is not connected to Stripe.', { retryAfterS: 300 });
  if (!signature) throw new AppError(400, 'Missing Stripe-Signature header');
  let event: Stripe.Event;
  try {
    event = stripe.api.webhooks.constructEvent(Buffer.from(payload), signature, stripe.webhookSecret, undefined, undefined, nowMs());
  } catch (error) {
    throw new AppError(400, "Invalid Stripe signature: the event was not signed with this endpoint's secret, or is too old.", {
      cause: error,
    });
  }
  if (!isHandled(event)) return { outcome: 'ignored' };
  const facts = factsOf(event);
  if (!facts) return { outcome: 'ignored' };
  const found = await findMember(runtime, stripe, facts);
  if (!found) {
    runtime.log.warn({ event: event.id, type: event.type }, '[billing] a Stripe event for no member of this site was ignored');
    return { outcome: 'ignored' };
  }
  const at = isoOfSeconds(event.created);
  const seen = (member: Member) => member.history.some((line) => line.stripeEventId === event.id);

  for (let attempt = 1; ; attempt++) {
    const before = await runtime.store.members.get(found.id);
    if (!before) return { outcome: 'ignored' };
    if (seen(before)) return { outcome: 'duplicate', memberId: before.id };
    const current = facts.subscriptionId ? await retrieveSubscription(stripe, facts.subscriptionId) : undefined;
    // The last call of `change` decides (a store may run it again when its transaction is retried).
    const write: { outcome: 'applied' | 'duplicate' | 'raced'; member?: Member } = { outcome: 'raced' };
    await runtime.store.members.mutate(before.id, (member) => {
      if (seen(member)) {
        write.outcome = 'duplicate';
        return undefined;
      }
      // Another event of this member was written since Stripe was asked: ask again rather than store an older answer.
      if (canonical(member.subscription) !== canonical(before.subscription)) {
        write.outcome = 'raced';
        return undefined;
      }
      write.outcome = 'applied';
      write.member = applyEvent(runtime, member, event, facts, current, at);
      return write.member;
    });
    if (write.outcome === 'duplicate') return { outcome: 'duplicate', memberId: before.id };
    if (write.outcome === 'applied' && write.member) {
      const status = write.member.subscription?.status;
      runtime.log.info({ event: event.id, type: event.type, member: before.id, status }, '[billing] Stripe event applied');
      await sendBillingMail(runtime, event, write.member);
      return { outcome: 'applied', memberId: before.id };
    }
    if (attempt >= WEBHOOK_ATTEMPTS) {
      // Stripe retries a delivery that failed: by then the member's other events are written.
      throw new ServiceUnavailableError('The member changed while this event was applied; Stripe will send it again.', { retryAfterS: 5 });
    }
  }
}

/** The member after an event: the customer id learnt, the subscription as Stripe has it, one history line. */
function applyEvent(
  runtime: Runtime,
  member: Member,
  event: HandledEvent,
  facts: EventFacts,
  current: Stripe.Subscription | undefined,
  at: string,
): Member {
  const next: Member = { ...member };
  if (!next.stripeCustomerId && facts.customerId) next.stripeCustomerId = facts.customerId;
  const snapshot = snapshotOf(event);
  let state: MemberSubscription | undefined;
  if (current) {
    state = subscriptionStateOf(current, member.subscription, at);
  } else if (snapshot) {
    // Stripe cannot tell us now: the event's snapshot, unless a newer event was applied already.
    const stored = member.subscription;
    const newer = !stored || stored.id !== snapshot.id || stored.syncedAt <= at;
    if (newer) state = subscriptionStateOf(snapshot, stored, at);
  }
  if (state && replacesStored(member.subscription, state)) next.subscription = state;
  const shown = state ?? (member.subscription?.id === facts.subscriptionId ? member.subscription : undefined);
  next.history = appendHistory(member.history, historyLineOf(runtime, event, shown, at), nowMs());
  return next;
}

/** The receipt or the payment-failed mail of an applied invoice event (inside the once-only path: one mail per event). */
async function sendBillingMail(runtime: Runtime, event: HandledEvent, member: Member): Promise<void> {
  if (event.type !== 'invoice.payment_succeeded' && event.type !== 'invoice.payment_failed') return;
  const invoice = event.data.object;
  const subscription = member.subscription;
  if (!subscription) return;
  const failed = event.type === 'invoice.payment_failed';
  const amount = failed ? invoice.amount_due : invoice.amount_paid;
  // A free first period (a trial) is not worth a receipt.
  if (amount <= 0) return;
  const graceEnd = new Date(
    Date.parse(subscription.pastDueSince ?? isoOfSeconds(event.created)) + PAST_DUE_GRACE_DAYS * DAY_MS,
  ).toISOString();
  const content: BillingMailContent = {
    name: member.name,
    amount,
    currency: invoice.currency,
    interval: subscription.interval,
    periodEnd: failed ? graceEnd : subscription.currentPeriodEnd,
  };
  const mail = failed ? renderPaymentFailedMail(runtime.config, content) : renderReceiptMail(runtime.config, content);
  try {
    // The event id names the message: a mail client shows a resent copy once.
    const host = new URL(runtime.config.SITE_URL).hostname;
    await sendWithinBudget(
      useMailer(runtime),
      { to: member.email, ...mail, messageId: `${event.id}@${host}` },
      runtime.config.SMTP_TIMEOUT_MS,
    );
  } catch (error) {
    // The event is applied and recorded: a mail server that is down must not make Stripe resend it (it would change nothing).
    // The error's text is not logged: an SMTP refusal quotes the address.
    const temporary = (error as { temporary?: unknown }).temporary === true;
    runtime.log.warn(
      { temporary, event: event.id, member: member.id },
      `[billing] the ${failed ? 'payment-failed' : 'receipt'} mail was not sent`,
    );
  }
}
