/** Readers' accounts (issue 48): sign-up and sign-in by a one-time link, the profile, the export and deleting an account. */
import { randomUUID } from 'node:crypto';
import { encodeBase32LowerCaseNoPadding } from '@oslojs/encoding';
import {
  MEMBER_HISTORY_LIMIT,
  memberStatus,
  readerLevelOf,
  type Member,
  type MemberEvent,
  type MemberSignInInput,
  type PublicMember,
} from '../../schemas/member.ts';
import type { Session } from '../../schemas/auth.ts';
import type { Runtime } from '../runtime.ts';
import { ServiceUnavailableError } from '../errors.ts';
import { nowIso } from '../clock.ts';
import { logOncePerMinute } from '../log.ts';
import { hashToken } from '../../security/secrets.ts';
import { RATE_LIMITS, consumeRateLimit } from '../rate-limit.ts';
import { siteUrl } from '../mail/templates.ts';
import { sendWithinBudget } from '../mail/transport.ts';
import { useMailer } from '../mail/mailer.ts';
import { isSubscribedAddress, subscribeProvenAddress } from '../newsletter.ts';
import { renderSignInLinkMail, renderWelcomeMail } from './member-mails.ts';
import { createMemberSession } from './sessions.ts';

/** A sign-in link works this long, and once. */
export const SIGN_IN_LINK_TTL_MS = 60 * 60_000;
/** A history line with a Stripe event id is kept at least this long: it is what makes a replayed webhook a no-op. */
const STRIPE_EVENT_MEMORY_MS = 30 * 24 * 60 * 60_000;
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
    ...(sub
      ? {
          subscription: {
            status: sub.status,
            interval: sub.interval,
            amount: sub.amount,
            currency: sub.currency,
            currentPeriodEnd: sub.currentPeriodEnd,
            cancelAtPeriodEnd: sub.cancelAtPeriodEnd,
          },
        }
      : {}),
  };
}

/** The member as GET /api/members/me answers: the newsletter choice as the subscriber list has it (an unsubscribe counts). */
export async function describeMember(runtime: Runtime, member: Member): Promise<PublicMember> {
  return toPublicMember(member, Date.now(), await isSubscribedAddress(runtime, member.email));
}

/**
 * A member's history with one line more, bounded by MEMBER_HISTORY_LIMIT: the oldest lines go first,
 * except a Stripe event's line younger than 30 days (it keeps a replayed webhook from applying twice).
 */
export function withHistory(member: Member, event: MemberEvent, now = Date.now()): Member {
  const history = [...member.history, event];
  let excess = history.length - MEMBER_HISTORY_LIMIT;
  if (excess <= 0) return { ...member, history };
  const kept = history.filter((line) => {
    if (excess <= 0) return true;
    if (line.stripeEventId && Date.parse(line.at) > now - STRIPE_EVENT_MEMORY_MS) return true;
    excess--;
    return false;
  });
  return { ...member, history: kept };
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
    const signedIn = await store.members.mutate(member.id, (m) =>
      withHistory({ ...m, lastSignInAt: at }, { at, kind: 'signed-in', text: 'Signed in with a link sent by e-mail' }),
    );
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
  if (created) await sendWelcomeMail(runtime, member);
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
