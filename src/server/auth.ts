/**
 * Accounts and sessions after Lucia's published design: a random token in the cookie, only its
 * SHA-256 stored, sliding 30-day expiry, logout deletes the session server-side.
 */
import { randomUUID } from 'node:crypto';
import { encodeBase32LowerCaseNoPadding } from '@oslojs/encoding';
import { hash, verify } from '@node-rs/argon2';
import type { PublicUser, Role, Session, User } from '../schemas/auth.ts';
import type { Runtime } from './runtime.ts';
import { AppError, isAppError } from './errors.ts';
import { clearLoginFailures, reserveLoginAttempt } from './rate-limit.ts';
import { nowIso } from './clock.ts';
import { permissionsOf, roleOf } from '../lib/permissions.ts';
import { isStorageFault } from './storage-faults.ts';
import { hashToken } from '../security/secrets.ts';

export const SESSION_COOKIE = 'session';
const DAY_MS = 24 * 60 * 60 * 1000;
export const SESSION_LIFETIME_MS = 30 * DAY_MS;
const SESSION_RENEW_WITHIN_MS = 15 * DAY_MS;

// OWASP's argon2id baseline (19 MiB, 2 iterations, 1 lane).
const ARGON2 = { memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/** 20 random bytes as base32: 160 bits of entropy. */
export function generateSessionToken(): string {
  const bytes = new Uint8Array(20);
  crypto.getRandomValues(bytes);
  return encodeBase32LowerCaseNoPadding(bytes);
}

export function sessionIdFromToken(token: string): string {
  return hashToken(token);
}

export async function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

export function toPublicUser(user: User): PublicUser {
  const role = roleOf(user);
  return { id: user.id, username: user.username, role, permissions: permissionsOf(role) };
}

/** A new session for a staff user, or with `kind: 'member'` for a reader (userId is then the member's id). */
export async function createSession(runtime: Runtime, userId: string, kind?: 'member'): Promise<{ token: string; session: Session }> {
  const token = generateSessionToken();
  const now = Date.now();
  const session: Session = {
    id: sessionIdFromToken(token),
    userId,
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + SESSION_LIFETIME_MS).toISOString(),
    ...(kind ? { kind } : {}),
  };
  await runtime.store.sessions.insert(session);
  return { token, session };
}

/**
 * The stored, unexpired session behind a token (an expired one is deleted), of either kind: the staff
 * and member checks below each refuse the other's.
 */
export async function findLiveSession(runtime: Runtime, token: string): Promise<Session | undefined> {
  if (!/^[a-z2-7]{32}$/.test(token)) return undefined;
  const id = sessionIdFromToken(token);
  const session = await runtime.store.sessions.get(id);
  if (!session) return undefined;
  if (Date.parse(session.expiresAt) <= Date.now()) {
    await forgetSession(runtime, id);
    return undefined;
  }
  return session;
}

/** Extends a session past half its life by another full lifetime; on a full disk it stays as it is, renewed on a later request. */
export async function slideSession(runtime: Runtime, session: Session): Promise<{ session: Session; renewed: boolean }> {
  const now = Date.now();
  if (Date.parse(session.expiresAt) - now >= SESSION_RENEW_WITHIN_MS) return { session, renewed: false };
  const renewedUntil = new Date(now + SESSION_LIFETIME_MS).toISOString();
  try {
    await runtime.store.sessions.setExpiry(session.id, renewedUntil);
  } catch (error) {
    if (!isStorageFault(error)) throw error;
    return { session, renewed: false };
  }
  return { session: { ...session, expiresAt: renewedUntil }, renewed: true };
}

/** The session and user behind a token, extending the session when it is past half its life. */
export async function validateSessionToken(
  runtime: Runtime,
  token: string,
): Promise<{ session: Session; user: User; renewed: boolean } | undefined> {
  const found = await findLiveSession(runtime, token);
  // A reader's session never signs anyone in as staff, whichever cookie carries it (it stays valid as a member's).
  if (!found || found.kind === 'member') return undefined;
  const user = await runtime.store.users.get(found.userId);
  // Disabling deletes the user's sessions; this also covers one created in the same instant.
  if (!user || user.disabled) {
    await forgetSession(runtime, found.id);
    return undefined;
  }
  const { session, renewed } = await slideSession(runtime, found);
  return { session, user, renewed };
}

/** Deletes a session that no longer signs anyone in; on a full disk it stays stored, refused all the same. */
export async function forgetSession(runtime: Runtime, id: string): Promise<void> {
  try {
    await runtime.store.sessions.delete(id);
  } catch (error) {
    if (!isStorageFault(error)) throw error;
  }
}

export async function invalidateSession(runtime: Runtime, sessionId: string): Promise<void> {
  await runtime.store.sessions.delete(sessionId);
}

// A hash to verify against when the username is unknown, so timing does not reveal which usernames exist.
let dummyHash: Promise<string> | undefined;

/** Checks credentials under the login throttle; answers a new session for the user. */
export async function logIn(
  runtime: Runtime,
  credentials: { username: string; password: string },
  clientIp: string,
): Promise<{ token: string; session: Session; user: User }> {
  const keys = [`ip:${clientIp}`, `user:${credentials.username.toLowerCase()}`];
  const log = runtime.log.child({ component: 'auth', client: clientIp });
  // Counted as a failure before the (slow) hash check, so concurrent guesses cannot slip past the throttle.
  try {
    await reserveLoginAttempt(runtime, keys);
  } catch (error) {
    if (isAppError(error) && error.status === 429) {
      const locked = await runtime.store.users.getByUsername(credentials.username).catch(() => undefined);
      log.warn({ event: 'login.locked', ...whoOf(locked) }, '[auth] sign-in refused: too many failed attempts (locked out)');
    }
    throw error;
  }
  const user = await runtime.store.users.getByUsername(credentials.username);
  dummyHash ??= hashPassword('not-a-real-password-just-timing');
  const ok = await verifyPassword(user?.passwordHash ?? (await dummyHash), credentials.password);
  if (!user || !ok) {
    log.warn({ event: 'login.failed', ...whoOf(user) }, '[auth] failed sign-in');
    throw new AppError(401, 'Invalid username or password.');
  }
  // Said only to someone who knows the password, so it reveals nothing to a guesser.
  if (user.disabled) {
    log.warn({ event: 'login.disabled', ...whoOf(user) }, `[auth] sign-in refused: ${user.username} is disabled`);
    throw new AppError(403, 'This account is disabled. Ask an administrator to re-enable it.');
  }
  await clearLoginFailures(runtime, keys);
  const { token, session } = await createSession(runtime, user.id);
  log.info({ event: 'login', ...whoOf(user) }, `[auth] ${user.username} signed in`);
  return { token, session, user };
}

/**
 * Who a sign-in line names: an existing account's id and username, never the name as typed when no
 * such account exists (people type their password into the username box).
 */
function whoOf(user: User | undefined): { userId: string; username: string } | { userKnown: false } {
  return user ? { userId: user.id, username: user.username } : { userKnown: false };
}

/** Signs a user out: their session goes, and the log says who. */
export async function logOut(runtime: Runtime, session: Session, user: User | undefined): Promise<void> {
  await invalidateSession(runtime, session.id);
  runtime.log.info({ component: 'auth', event: 'logout', ...whoOf(user) }, `[auth] ${user?.username ?? 'a user'} signed out`);
}

/** Creates a user (an admin unless a role is given), or resets the password of an existing one (keeping its role). */
export async function upsertUser(runtime: Runtime, username: string, password: string, role?: Role): Promise<User> {
  if (password.length < 8) throw new AppError(400, 'Passwords need at least 8 characters');
  const existing = await runtime.store.users.getByUsername(username);
  const user = await runtime.store.users.upsert({
    id: existing?.id ?? randomUUID(),
    username: existing?.username ?? username,
    passwordHash: await hashPassword(password),
    createdAt: existing?.createdAt ?? nowIso(),
    role: role ?? existing?.role ?? 'admin',
    ...(existing?.disabled ? { disabled: true } : {}),
  });
  if (existing) await runtime.store.sessions.deleteForUser(existing.id);
  return user;
}

/** A readable random password: 4 groups of 5 base32 characters (100 bits). */
export function generatePassword(): string {
  const bytes = new Uint8Array(13);
  crypto.getRandomValues(bytes);
  return encodeBase32LowerCaseNoPadding(bytes).slice(0, 20).match(/.{5}/g)!.join('-');
}

/**
 * Creates the first admin on first start from ADMIN_USERNAME / ADMIN_PASSWORD; with no password a
 * random one is generated. Answers the credentials to print once, or undefined when users exist.
 */
export async function ensureFirstAdmin(runtime: Runtime): Promise<{ username: string; password: string; generated: boolean } | undefined> {
  if ((await runtime.store.users.count()) > 0) return undefined;
  const username = runtime.config.ADMIN_USERNAME;
  const generated = runtime.config.ADMIN_PASSWORD === undefined;
  const password = runtime.config.ADMIN_PASSWORD ?? generatePassword();
  await upsertUser(runtime, username, password);
  return { username, password, generated };
}
