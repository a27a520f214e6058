/** Readers' accounts (issue 48): sign-up and sign-in by a one-time link, the profile, the export and deleting an account. */
import { randomUUID } from 'node:crypto';
import { encodeBase32LowerCaseNoPadding } from '@oslojs/encoding';
import {
  memberStatus,
  readerLevelOf,
  type Member,
  type MemberEvent,
  type MemberSignInInput,
  type MemberSubscription,
  type PublicMember,
  publicSubscriptionOf,
} from '../../schemas/member.ts';
import type { Session } from '../../schemas/auth.ts';
import type { Comment } from '../../schemas/comment.ts';
import { subscriberStatus } from '../../schemas/newsletter.ts';
import type { Runtime } from '../runtime.ts';
import { ServiceUnavailableError, conflict, unauthorized } from '../errors.ts';
import { nowIso } from '../clock.ts';
import { logOncePerMinute } from '../log.ts';
import { hashToken } from '../../security/secrets.ts';
import { RATE_LIMITS, consumeRateLimit } from '../rate-limit.ts';
import { siteUrl } from '../mail/templates.ts';
import { sendWithinBudget } from '../mail/transport.ts';
import { useMailer } from '../mail/mailer.ts';
import { forgetAddress, isSubscribedAddress, subscribeProvenAddress, unsubscribeAddress } from '../newsletter.ts';
import { renderSignInLinkMail, renderWelcomeMail } from './member-mails.ts';
import { createMemberSession, invalidateMemberSessions } from './sessions.ts';
import { appendHistory } from './history.ts';

/** A sign-in link works this long, and once. */
export const SIGN_IN_LINK_TTL_MS = 60 * 60_000;
/** The Retry-After of a sign-in whose mail could not be sent: mail servers come back in minutes. */
const MAIL_RETRY_AFTER_S = 120;

/** What a link stands for until it is followed, kept (under the token's SHA-256) in the store's short-lived limits. */
type PendingLink = {
  email: string;
  name?: string | undefined;
  newsletter?: boolean | undefined;
  next?: string | undefined;
  expiresAt: number;
  used?: true;
};

function linkKey(token: string): string {
  return `member-link:${hashToken(token)}`;
}

function randomToken(): string {
  const bytes = new Uint8Array(20);
  crypto.getRandomValues(bytes);
  return encodeBase32LowerCaseNoPadding(bytes);
}

/** The member as they see themselves (GET /api/members/me); `newsletter` as the subscriber list has it when given. */
export function toPublicMember(member: Member, now = Date.now(), newsletter = member.newsletter): PublicMember {
  const level = readerLevelOf(member, now);
  const sub = member.subscription;
  return {
    id: member.id,
    email: member.email,
    name: member.name,
    newsletter,
    createdAt: member.createdAt,
    status: memberStatus(member, now),
    level: level === 'paid' ? 'paid' : 'free',
    ...(sub ? { subscription: publicSubscriptionOf(sub) } : {}),
  };
}

/** The member as GET /api/members/me answers: the newsletter choice as the subscriber list has it (an unsubscribe counts). */
export async function describeMember(runtime: Runtime, member: Member): Promise<PublicMember> {
  return toPublicMember(member, Date.now(), await isSubscribedAddress(runtime, member.email));
}

/**
 * Mails a one-time sign-in link. One link serves sign-up and sign-in: a new address gets the "create
 * your account" copy, a known one the "sign in" copy; the caller answers the same either way. The
 * per-IP limit is the endpoint's (counted before parsing); the per-address one is counted here.
 */
export async function requestSignInLink(runtime: Runtime, input: MemberSignInInput): Promise<void> {
  const { store, config } = runtime;
  // Keyed by the address's hash: the limits table holds no address in clear.
  await consumeRateLimit(runtime, RATE_LIMITS.memberSignInAddress, hashToken(input.email));
  const existing = await store.members.getByEmail(input.email);
  const token = randomToken();
  const expiresAt = Date.now() + SIGN_IN_LINK_TTL_MS;
  const link: PendingLink = { email: input.email, name: input.name, newsletter: input.newsletter, next: input.next, expiresAt };
  await store.limits.set(linkKey(token), link, expiresAt);
  const mail = renderSignInLinkMail(config, siteUrl(config, `/api/members/confirm?token=${token}`), existing === undefined);
  try {
    // A person waits for this answer: one SMTP_TIMEOUT_MS in all, never nodemailer's minutes.
    await sendWithinBudget(useMailer(runtime), { to: input.email, ...mail }, config.SMTP_TIMEOUT_MS);
  } catch (error) {
    const reason = (error as Error).message;
    logOncePerMinute(
      runtime.log,
      'members:sign-in-mail',
      { component: 'members', ...(existing ? { memberId: existing.id } : { memberKnown: false }), err: reason },
      `[members] a sign-in mail failed: ${reason}`,
    );
    // The link reached no inbox: it must not work later either.
    await store.limits.delete(linkKey(token)).catch(() => {});
    throw new ServiceUnavailableError('We could not send the sign-in e-mail. Please try again in a few minutes.', {
      retryAfterS: MAIL_RETRY_AFTER_S,
      cause: error,
    });
  }
}

export type ConfirmResult =
  { kind: 'signed-in'; member: Member; token: string; session: Session; created: boolean; next: string | undefined } | { kind: 'expired' };

/**
 * Follows a sign-in link: once, within its hour. Marking it used is one step of the store
 * (`limits.update`), so two clicks (or two servers) cannot both sign in with it. A new address becomes a
 * member (with the newsletter, confirmed, when asked for: the link proved the address) and gets the welcome mail.
 */
export async function confirmSignInLink(runtime: Runtime, token: string): Promise<ConfirmResult> {
  const { store } = runtime;
  if (!/^[a-z2-7]{32}$/.test(token)) return { kind: 'expired' };
  const key = linkKey(token);
  const now = Date.now();
  // Read first: an unknown token (a guess, an old mail) writes nothing.
  if (!(await store.limits.get<PendingLink>(key, now))) return { kind: 'expired' };
  let link: PendingLink | undefined;
  await store.limits.update<PendingLink>(key, now, (current) => {
    link = current && !current.used && current.expiresAt > now ? current : undefined;
    const expiresAt = current?.expiresAt ?? now + SIGN_IN_LINK_TTL_MS;
    return { value: { email: '', expiresAt, used: true }, expiresAt };
  });
  const followed = link as PendingLink | undefined;
  if (!followed) return { kind: 'expired' };

  const at = nowIso();
  let created = false;
  let member = await store.members.getByEmail(followed.email);
  if (!member) {
    const fresh: Member = {
      id: randomUUID(),
      email: followed.email,
      name: followed.name ?? '',
      newsletter: followed.newsletter === true,
      createdAt: at,
      lastSignInAt: at,
      history: [{ at, kind: 'signed-up', text: 'Created an account with a link sent by e-mail' }],
    };
    // false: the same address signed up at the same moment through another link; that account is theirs.
    created = await store.members.insert(fresh);
    member = created ? fresh : await store.members.getByEmail(followed.email);
    if (!member) return { kind: 'expired' };
  }
  if (!created) {
    const signedIn = await store.members.mutate(member.id, (m) => ({
      ...m,
      lastSignInAt: at,
      history: appendHistory(m.history, { at, kind: 'signed-in', text: 'Signed in with a link sent by e-mail' }, Date.now()),
    }));
    // Deleted between the two reads: the link signs nobody in.
    if (!signedIn) return { kind: 'expired' };
    member = signedIn;
  }
  if (created && member.newsletter) await subscribeProvenAddress(runtime, member.email);
  const { token: sessionToken, session } = await createMemberSession(runtime, member.id);
  runtime.log.info(
    { component: 'members', event: created ? 'member.signed-up' : 'member.signed-in', memberId: member.id },
    `[members] member ${member.id} ${created ? 'signed up' : 'signed in'}`,
  );
  // Not awaited: a slow mail server must not hold the reader at the link (sendWelcomeMail catches and logs its own failure).
  if (created) void sendWelcomeMail(runtime, member);
  return { kind: 'signed-in', member, token: sessionToken, session, created, next: followed.next };
}

/** The welcome mail: worth a try, never worth failing the sign-in over (the account exists and works without it). */
async function sendWelcomeMail(runtime: Runtime, member: Member): Promise<void> {
  try {
    const mail = renderWelcomeMail(runtime.config, member.name, member.newsletter);
    await sendWithinBudget(useMailer(runtime), { to: member.email, ...mail }, runtime.config.SMTP_TIMEOUT_MS);
  } catch (error) {
    const reason = (error as Error).message;
    logOncePerMinute(
      runtime.log,
      'members:welcome-mail',
      { component: 'members', memberId: member.id, err: reason },
      `[members] the welcome mail to member ${member.id} failed: ${reason}`,
    );
  }
}

/** PATCH /api/members/me: the name and the newsletter choice (the subscriber list follows: the address is proven). */
export async function updateProfile(
  runtime: Runtime,
  member: Member,
  change: { name?: string | undefined; newsletter?: boolean | undefined },
): Promise<PublicMember> {
  const at = nowIso();
  const updated = await runtime.store.members.mutate(member.id, (current) => {
    const lines: string[] = [];
    let next = current;
    if (change.name !== undefined && change.name !== current.name) {
      next = { ...next, name: change.name };
      lines.push('Changed their name');
    }
    if (change.newsletter !== undefined && change.newsletter !== current.newsletter) {
      next = { ...next, newsletter: change.newsletter };
      lines.push(change.newsletter ? 'Subscribed to the newsletter' : 'Unsubscribed from the newsletter');
    }
    return lines.length === 0
      ? undefined
      : { ...next, history: appendHistory(next.history, { at, kind: 'profile-changed', text: lines.join('; ') }, Date.now()) };
  });
  if (!updated) throw unauthorized('Sign in to your account first.');
  // Applied even when the record already said so: a briefing's unsubscribe link may have changed the list meanwhile.
  if (change.newsletter === true) await subscribeProvenAddress(runtime, updated.email);
  if (change.newsletter === false) await unsubscribeAddress(runtime, updated.email);
  return describeMember(runtime, updated);
}

/** Most comments one export or deletion reads; far above any one reader's. */
const MAX_OWN_COMMENTS = 10_000;

/** A member's comments: those posted with their address (signed in, or before they had an account). */
async function commentsOf(runtime: Runtime, member: Member): Promise<Comment[]> {
  const found = await runtime.store.comments.list({ search: member.email }, { offset: 0, limit: MAX_OWN_COMMENTS });
  return found.filter((comment) => comment.authorEmail.toLowerCase() === member.email);
}

export type MemberExport = {
  exportedAt: string;
  account: Omit<Member, 'stripeCustomerId' | 'subscription' | 'comp' | 'history'> & {
    subscription?: Omit<MemberSubscription, 'id' | 'syncedAt'>;
    comp?: { since: string; until?: string };
    history: Pick<MemberEvent, 'at' | 'kind' | 'text'>[];
  };
  comments: {
    id: string;
    articleId: string;
    articleUrl?: string;
    content: string;
    authorName: string;
    status: string;
    createdAt: string;
  }[];
  newsletter: { status: 'subscribed' | 'pending' | 'unsubscribed' | 'none'; since?: string };
};

/**
 * GET /api/members/me/export: everything the site holds about the member, as the member would read it;
 * no internal field (Stripe's ids, the staff member who granted a comp, webhook event ids).
 */
export async function exportMemberData(runtime: Runtime, member: Member): Promise<MemberExport> {
  const { stripeCustomerId: _customer, subscription, comp, history, ...account } = member;
  const comments = await commentsOf(runtime, member);
  const subscriber = await runtime.store.subscribers.getByEmail(member.email);
  const state = subscriber ? subscriberStatus(subscriber) : undefined;
  const articles = new Map<string, string | undefined>();
  for (const comment of comments) {
    if (articles.has(comment.articleId)) continue;
    const article = await runtime.store.articles.get(comment.articleId);
    articles.set(comment.articleId, article?.status === 'published' ? siteUrl(runtime.config, `/article/${article.slug}`) : undefined);
  }
  return {
    exportedAt: nowIso(),
    account: {
      ...account,
      ...(subscription ? { subscription: (({ id: _id, syncedAt: _synced, ...rest }) => rest)(subscription) } : {}),
      ...(comp ? { comp: { since: comp.at, ...(comp.until ? { until: comp.until } : {}) } } : {}),
      history: history.map(({ at, kind, text }) => ({ at, kind, text })),
    },
    comments: comments.map((comment) => ({
      id: comment.id,
      articleId: comment.articleId,
      ...(articles.get(comment.articleId) ? { articleUrl: articles.get(comment.articleId)! } : {}),
      content: comment.content,
      authorName: comment.authorName,
      status: comment.status,
      createdAt: comment.createdAt,
    })),
    newsletter: subscriber
      ? {
          status: state === 'confirmed' ? 'subscribed' : state === 'pending' ? 'pending' : 'unsubscribed',
          since: subscriber.unsubscribedAt ?? subscriber.confirmedAt ?? subscriber.createdAt,
        }
      : { status: 'none' },
  };
}

/** Stripe would still charge it: the member must cancel in the Customer Portal first (this server never cancels for them). */
function hasRunningSubscription(member: Member): boolean {
  const sub = member.subscription;
  return sub !== undefined && !sub.endedAt && !sub.cancelAtPeriodEnd && ['active', 'trialing', 'past_due'].includes(sub.status);
}

export const RUNNING_SUBSCRIPTION_REFUSAL = 'Cancel your paid subscription in Manage billing first, then delete your account.';

/**
 * DELETE /api/members/me: the account and all it holds. Comments are deleted, not anonymised: their
 * text is the member's own words, often enough to identify them, and "delete everything" must mean it.
 * The newsletter subscription goes too; no audit line or tombstone keeps the address.
 */
export async function deleteAccount(runtime: Runtime, member: Member): Promise<{ comments: number }> {
  const current = await runtime.store.members.get(member.id);
  if (!current) throw unauthorized('Sign in to your account first.');
  if (hasRunningSubscription(current)) throw conflict(RUNNING_SUBSCRIPTION_REFUSAL);
  // The parts first, the account last: a failure part way leaves an account that can delete again.
  const comments = await commentsOf(runtime, current);
  for (const comment of comments) await runtime.store.comments.delete(comment.id);
  await forgetAddress(runtime, current.email);
  await runtime.store.members.delete(current.id);
  await invalidateMemberSessions(runtime, current.id);
  runtime.log.info(
    { component: 'members', event: 'member.deleted', memberId: current.id, comments: comments.length },
    `[members] member ${current.id} deleted their account (${comments.length} comments with it)`,
  );
  return { comments: comments.length };
}
