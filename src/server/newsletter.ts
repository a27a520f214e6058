/** Newsletter subscriptions: double opt-in sign-up, confirmation, unsubscribe, and the dashboard's subscriber list. */
import { logOncePerMinute, maskEmail } from './log.ts';
import { randomUUID } from 'node:crypto';
import { encodeBase32LowerCaseNoPadding } from '@oslojs/encoding';
import type { Runtime } from './runtime.ts';
import { notFound, ServiceUnavailableError, tooManyRequests } from './errors.ts';
import { nowIso } from './clock.ts';
import {
  subscriberStatus,
  type PublicSubscriber,
  type Subscriber,
  type SubscriberListing,
  type SubscriberListQuery,
} from '../schemas/newsletter.ts';
import { renderConfirmationMail, siteUrl } from './mail/templates.ts';
import { sendWithinBudget } from './mail/transport.ts';
import { useMailer } from './mail/mailer.ts';
import { hashToken } from '../security/secrets.ts';

/** The Retry-After of a sign-up whose confirmation mail could not be sent: mail servers come back in minutes. */
const SIGN_UP_RETRY_AFTER_S = 120;
/** A confirmation link works this long. */
const CONFIRM_TTL_MS = 7 * 24 * 60 * 60_000;
/** Confirmation mails per address (a day) and sign-ups per client IP (an hour): enough for a lost mail, too few to bomb an inbox. */
export const CONFIRM_LIMITS = {
  perAddress: { limit: 3, windowMs: 24 * 60 * 60_000 },
  perIp: { limit: 10, windowMs: 60 * 60_000 },
};

function randomToken(): string {
  const bytes = new Uint8Array(20);
  crypto.getRandomValues(bytes);
  return encodeBase32LowerCaseNoPadding(bytes);
}

export type SubscribeResult = { mailed: boolean };

/**
 * Signs an address up. New, pending and unsubscribed addresses get a confirmation mail (a fresh
 * one-time link) within the limits; a confirmed address gets nothing. The caller answers the same in
 * every case, so the answer reveals nothing about the list.
 */
export async function subscribe(runtime: Runtime, email: string, clientIp: string): Promise<SubscribeResult> {
  const { store } = runtime;
  const now = Date.now();
  // Per IP, counted for every sign-up (confirmed addresses too, or a 429 would tell them apart): a 429.
  const ipHits = await store.limits.hit(`newsletter-confirm-ip:${clientIp}`, CONFIRM_LIMITS.perIp.windowMs, now);
  if (ipHits.count > Math.ceil(CONFIRM_LIMITS.perIp.limit * runtime.config.RATE_LIMIT_FACTOR))
    throw tooManyRequests((ipHits.resetAt - now) / 1000);
  const existing = await store.subscribers.getByEmail(email);
  if (existing && subscriberStatus(existing) === 'confirmed') return { mailed: false };
  // Per address: silently no further mail.
  const addressHits = await store.limits.hit(`newsletter-confirm-address:${email}`, CONFIRM_LIMITS.perAddress.windowMs, now);
  if (addressHits.count > CONFIRM_LIMITS.perAddress.limit) return { mailed: false };

  const token = randomToken();
  const pending = {
    confirmTokenHash: hashToken(token),
    confirmExpiresAt: new Date(now + CONFIRM_TTL_MS).toISOString(),
    confirmSentAt: new Date(now).toISOString(),
  };
  const id = existing?.id ?? randomUUID();
  if (existing) {
    // Coming back after unsubscribing means confirming again; a resend replaces the previous link.
    await store.subscribers.update(existing.id, { ...pending, unsubscribedAt: undefined, confirmedAt: undefined });
  } else {
    await store.subscribers.upsert({ id, email, token: randomToken(), createdAt: nowIso(), ...pending });
  }
  const mail = renderConfirmationMail(runtime.config, siteUrl(runtime.config, `/newsletter/confirm?token=${token}`));
  try {
    // A person waits for this answer: one SMTP_TIMEOUT_MS in all, retries included, never nodemailer's minutes.
    await sendWithinBudget(useMailer(runtime), { to: email, ...mail }, runtime.config.SMTP_TIMEOUT_MS);
  } catch (error) {
    const reason = (error as Error).message;
    logOncePerMinute(
      runtime.log,
      'newsletter:confirmation-mail',
      { component: 'newsletter', to: maskEmail(email), err: reason },
      `[newsletter] confirmation mail to ${maskEmail(email)} failed: ${reason}`,
    );
    await undoSignUp(runtime, id, existing, { key: `newsletter-confirm-address:${email}`, resetAt: addressHits.resetAt });
    throw new ServiceUnavailableError('We could not send the confirmation e-mail. Please try again in a few minutes.', {
      retryAfterS: SIGN_UP_RETRY_AFTER_S,
      cause: error,
    });
  }
  return { mailed: true };
}

/**
 * Puts a sign-up whose confirmation mail did not go out back as it was: a new address leaves no
 * record, a known one keeps its previous state (and link), and the mail does not count against the
 * address's daily limit (it reached no inbox).
 */
async function undoSignUp(
  runtime: Runtime,
  id: string,
  before: Subscriber | undefined,
  hit: { key: string; resetAt: number },
): Promise<void> {
  const { store } = runtime;
  try {
    if (!before) await store.subscribers.delete(id);
    else
      await store.subscribers.update(id, {
        confirmTokenHash: before.confirmTokenHash,
        confirmExpiresAt: before.confirmExpiresAt,
        confirmSentAt: before.confirmSentAt,
        confirmedAt: before.confirmedAt,
        unsubscribedAt: before.unsubscribedAt,
      });
    await store.limits.update<number>(hit.key, Date.now(), (count) => ({ value: Math.max(0, (count ?? 1) - 1), expiresAt: hit.resetAt }));
  } catch (error) {
    // The store failing too (a database outage takes both down): the pending record stays, unconfirmable without its mail.
    runtime.log.error(
      { component: 'newsletter', subscriberId: id, err: (error as Error).message },
      `[newsletter] could not undo the sign-up ${id} after its mail failed: ${(error as Error).message}`,
    );
  }
}

export type ConfirmOutcome = { kind: 'confirmed'; email: string } | { kind: 'unknown' } | { kind: 'expired' };

/** Follows a confirmation link: one use, within its lifetime. */
export async function confirmSubscription(runtime: Runtime, token: string): Promise<ConfirmOutcome> {
  const subscriber = await runtime.store.subscribers.getByConfirmTokenHash(hashToken(token));
  if (!subscriber || subscriberStatus(subscriber) !== 'pending') return { kind: 'unknown' };
  if (!subscriber.confirmExpiresAt || subscriber.confirmExpiresAt < nowIso()) return { kind: 'expired' };
  await runtime.store.subscribers.update(subscriber.id, {
    confirmedAt: nowIso(),
    confirmTokenHash: undefined,
    confirmExpiresAt: undefined,
  });
  return { kind: 'confirmed', email: subscriber.email };
}

/**
 * Subscribes an address its owner has already proved (a member's sign-in link, issue 48): confirmed at
 * once, without a confirmation mail. A pending or unsubscribed record of the address becomes confirmed.
 */
export async function subscribeProvenAddress(runtime: Runtime, email: string): Promise<void> {
  const { store } = runtime;
  const existing = await store.subscribers.getByEmail(email);
  const at = nowIso();
  if (!existing) {
    await store.subscribers.upsert({ id: randomUUID(), email, token: randomToken(), createdAt: at, confirmedAt: at });
    return;
  }
  if (subscriberStatus(existing) === 'confirmed') return;
  await store.subscribers.update(existing.id, {
    confirmedAt: at,
    unsubscribedAt: undefined,
    confirmTokenHash: undefined,
    confirmExpiresAt: undefined,
  });
}

/** Ends an address's subscription, if it has one (a member turned the newsletter off in their account). */
export async function unsubscribeAddress(runtime: Runtime, email: string): Promise<void> {
  const existing = await runtime.store.subscribers.getByEmail(email);
  if (existing && subscriberStatus(existing) !== 'unsubscribed')
    await runtime.store.subscribers.update(existing.id, { unsubscribedAt: nowIso() });
}

/** Removes an address from the list altogether (a member deleted their account). */
export async function forgetAddress(runtime: Runtime, email: string): Promise<void> {
  const existing = await runtime.store.subscribers.getByEmail(email);
  if (existing) await runtime.store.subscribers.delete(existing.id);
}

/** Whether an address receives the briefing (confirmed, not unsubscribed). */
export async function isSubscribedAddress(runtime: Runtime, email: string): Promise<boolean> {
  const existing = await runtime.store.subscribers.getByEmail(email);
  return existing !== undefined && subscriberStatus(existing) === 'confirmed';
}

export async function unsubscribe(runtime: Runtime, token: string): Promise<{ email: string }> {
  const subscriber = await runtime.store.subscribers.unsubscribe(token, nowIso());
  if (!subscriber) throw notFound('Subscription');
  return { email: subscriber.email };
}

/** The URL that unsubscribes a subscriber: the visible link (GET) and, under /api, the RFC 8058 one-click POST target. */
export function unsubscribeUrls(runtime: Runtime, subscriber: Pick<Subscriber, 'token'>): { page: string; oneClick: string } {
  const query = `?token=${encodeURIComponent(subscriber.token)}`;
  return {
    page: siteUrl(runtime.config, `/newsletter/unsubscribe${query}`),
    oneClick: siteUrl(runtime.config, `/api/newsletter/unsubscribe${query}`),
  };
}

function toPublic(subscriber: Subscriber): PublicSubscriber {
  return {
    id: subscriber.id,
    email: subscriber.email,
    status: subscriberStatus(subscriber),
    createdAt: subscriber.createdAt,
    confirmedAt: subscriber.confirmedAt,
    unsubscribedAt: subscriber.unsubscribedAt,
  };
}

export async function listSubscribers(runtime: Runtime, query: SubscriberListQuery): Promise<SubscriberListing> {
  const { items, total } = await runtime.store.subscribers.listFiltered(
    { q: query.q?.toLowerCase(), status: query.status },
    { offset: (query.page - 1) * query.pageSize, limit: query.pageSize },
  );
  const last = await runtime.store.briefings.latest();
  return {
    items: items.map(toPublic),
    total,
    page: query.page,
    pageSize: query.pageSize,
    counts: await runtime.store.subscribers.countByStatus(),
    lastBriefing: last
      ? {
          date: last.date,
          startedAt: last.startedAt,
          finishedAt: last.finishedAt,
          status: last.status,
          recipients: last.recipients,
          sent: last.sent,
          failed: last.failed,
          unknown: last.unknown,
          forced: last.forced,
        }
      : null,
  };
}

export async function removeSubscriber(runtime: Runtime, id: string): Promise<void> {
  if (!(await runtime.store.subscribers.delete(id))) throw notFound('Subscriber');
}

/**
 * One CSV cell: quoted, and a cell a spreadsheet would read as a formula (=, +, -, @, tab, CR)
 * gets a leading apostrophe (OWASP's advice against CSV injection).
 */
export function csvCell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return `"${safe.replace(/"/g, '""')}"`;
}

/** Every subscriber as CSV (RFC 4180, CRLF), oldest first. */
export async function exportSubscribersCsv(runtime: Runtime): Promise<string> {
  const rows = [['email', 'status', 'signed_up', 'confirmed', 'unsubscribed']];
  const { items } = await runtime.store.subscribers.listFiltered({}, { offset: 0, limit: Number.MAX_SAFE_INTEGER });
  for (const s of items.reverse()) {
    rows.push([s.email, subscriberStatus(s), s.createdAt, s.confirmedAt ?? '', s.unsubscribedAt ?? '']);
  }
  return rows.map((row) => row.map(csvCell).join(',')).join('\r\n') + '\r\n';
}
