/** Accounts, sessions and throttles: token hashing, expiry, sliding renewal, login throttle, rate limits. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sha256 } from '@oslojs/crypto/sha2';
import { encodeHexLowerCase } from '@oslojs/encoding';
import {
  SESSION_LIFETIME_MS,
  createSession,
  ensureFirstAdmin,
  generatePassword,
  generateSessionToken,
  hashPassword,
  invalidateSession,
  logIn,
  sessionIdFromToken,
  upsertUser,
  validateSessionToken,
  verifyPassword,
} from '../../src/server/auth.ts';
import { checkLoginThrottle, clearLoginFailures, consumeRateLimit, recordLoginFailure } from '../../src/server/rate-limit.ts';
import { appErrorOf, makeRuntime } from './support.ts';
import { storeJsonFiles } from '../../src/store/lowdb/inspect.ts';
import { testingPostgres } from '../helpers/postgres.ts';
import { readDataFile } from '../api/support.ts';

type TestRuntime = Awaited<ReturnType<typeof makeRuntime>>;
let runtime: TestRuntime;

beforeEach(async () => {
  runtime = await makeRuntime();
});

afterEach(async () => {
  await runtime.store.close();
});

const errorOf = appErrorOf;

const DAY = 24 * 60 * 60 * 1000;

describe('passwords and tokens', () => {
  it('hashes with argon2id and verifies', async () => {
    const hash = await hashPassword('correct horse');
    expect(hash).toMatch(/^\$argon2id\$/);
    expect(await verifyPassword(hash, 'correct horse')).toBe(true);
    expect(await verifyPassword(hash, 'wrong')).toBe(false);
    expect(await verifyPassword('not-a-hash', 'x')).toBe(false);
  });

  it('generates 160-bit tokens and readable passwords', () => {
    const tokens = new Set(Array.from({ length: 50 }, generateSessionToken));
    expect(tokens.size).toBe(50);
    for (const token of tokens) expect(token).toMatch(/^[a-z2-7]{32}$/);
    expect(generatePassword()).toMatch(/^[a-z2-7]{5}(-[a-z2-7]{5}){3}$/);
  });

  it('stores only the SHA-256 of a session token, never the token', async () => {
    const user = await upsertUser(runtime, 'editor', 'long-enough-password');
    const { token, session } = await createSession(runtime, user.id);
    expect(session.id).toBe(encodeHexLowerCase(sha256(new TextEncoder().encode(token))));
    expect(sessionIdFromToken(token)).toBe(session.id);
    // Every file the sessions are kept in (layout 2: hashed buckets), or on PostgreSQL the whole sessions table.
    const file = testingPostgres()
      ? JSON.stringify(await readDataFile(runtime.dataDir, 'sessions'))
      : storeJsonFiles(runtime.dataDir)
          .filter((f) => f.includes(`${path.sep}sessions${path.sep}`))
          .map((f) => fs.readFileSync(f, 'utf8'))
          .join('\n');
    expect(file).toContain(session.id);
    expect(file).not.toContain(token);
  });
});

describe('validateSessionToken', () => {
  it('answers the session and user for a valid token, nothing for bad ones', async () => {
    const user = await upsertUser(runtime, 'editor', 'long-enough-password');
    const { token } = await createSession(runtime, user.id);
    expect((await validateSessionToken(runtime, token))?.user.username).toBe('editor');
    expect(await validateSessionToken(runtime, 'too-short')).toBeUndefined();
    expect(await validateSessionToken(runtime, generateSessionToken())).toBeUndefined();
    expect(await validateSessionToken(runtime, token.toUpperCase())).toBeUndefined();
  });

  it('expires sessions after their lifetime and deletes them', async () => {
    const user = await upsertUser(runtime, 'editor', 'long-enough-password');
    const { token, session } = await createSession(runtime, user.id);
    expect(Date.parse(session.expiresAt) - Date.parse(session.createdAt)).toBe(SESSION_LIFETIME_MS);
    await runtime.store.sessions.setExpiry(session.id, new Date(Date.now() - 1000).toISOString());
    expect(await validateSessionToken(runtime, token)).toBeUndefined();
    expect(await runtime.store.sessions.get(session.id)).toBeUndefined();
  });

  it('extends a session used in the second half of its life (sliding expiry), not one in the first half', async () => {
    const user = await upsertUser(runtime, 'editor', 'long-enough-password');
    const { token, session } = await createSession(runtime, user.id);
    const fresh = await validateSessionToken(runtime, token);
    expect(fresh?.session.expiresAt).toBe(session.expiresAt);
    expect(fresh?.renewed).toBe(false);
    const soon = new Date(Date.now() + 10 * DAY).toISOString();
    await runtime.store.sessions.setExpiry(session.id, soon);
    const before = Date.now();
    const renewed = await validateSessionToken(runtime, token);
    expect(renewed?.renewed).toBe(true);
    const renewedAt = Date.parse(renewed!.session.expiresAt);
    expect(renewedAt).toBeGreaterThanOrEqual(before + SESSION_LIFETIME_MS);
    expect(renewedAt).toBeLessThanOrEqual(Date.now() + SESSION_LIFETIME_MS);
    expect((await runtime.store.sessions.get(session.id))?.expiresAt).toBe(renewed!.session.expiresAt);
  });

  it('drops the session of a user that no longer exists, and on logout', async () => {
    const user = await upsertUser(runtime, 'editor', 'long-enough-password');
    const orphan = await createSession(runtime, 'deleted-user');
    expect(await validateSessionToken(runtime, orphan.token)).toBeUndefined();
    expect(await runtime.store.sessions.get(orphan.session.id)).toBeUndefined();
    const { token, session } = await createSession(runtime, user.id);
    await invalidateSession(runtime, session.id);
    expect(await validateSessionToken(runtime, token)).toBeUndefined();
  });
});

describe('users', () => {
  it('creates, resets (signing the user out) and refuses short passwords', async () => {
    const created = await upsertUser(runtime, 'Editor', 'first-password');
    const { token } = await createSession(runtime, created.id);
    const reset = await upsertUser(runtime, 'editor', 'second-password');
    expect(reset.id).toBe(created.id);
    expect(reset.username).toBe('Editor');
    expect(await validateSessionToken(runtime, token)).toBeUndefined();
    expect(await verifyPassword(reset.passwordHash, 'second-password')).toBe(true);
    expect((await errorOf(upsertUser(runtime, 'x', 'short')))?.status).toBe(400);
  });

  it('creates the first admin once, with a generated password when none is configured', async () => {
    const first = await ensureFirstAdmin(runtime);
    expect(first).toMatchObject({ username: 'admin', generated: true });
    expect(await ensureFirstAdmin(runtime)).toBeUndefined();
    const session = await logIn(runtime, { username: 'admin', password: first!.password }, '127.0.0.1');
    expect(session.user.username).toBe('admin');
  });
});

describe('logIn and the login throttle', () => {
  it('signs in with the right password and refuses a wrong one or an unknown user alike', async () => {
    await upsertUser(runtime, 'editor', 'long-enough-password');
    const ok = await logIn(runtime, { username: 'EDITOR', password: 'long-enough-password' }, '1.1.1.1');
    expect((await validateSessionToken(runtime, ok.token))?.user.id).toBe(ok.user.id);
    const wrong = await errorOf(logIn(runtime, { username: 'editor', password: 'nope' }, '1.1.1.2'));
    const unknown = await errorOf(logIn(runtime, { username: 'ghost', password: 'nope' }, '1.1.1.3'));
    expect(wrong?.status).toBe(401);
    expect(unknown?.status).toBe(401);
    expect(unknown?.message).toBe(wrong?.message);
  });

  it('grows the lock-out after 3 free failures: 1 s, 2 s, 4 s...', async () => {
    const key = 'ip:9.9.9.9';
    for (let failure = 1; failure <= 7; failure++) {
      const before = Date.now();
      await recordLoginFailure(runtime, [key]);
      const after = Date.now();
      const state = await runtime.store.limits.get<{ failures: number; lockedUntil: number }>(`login:${key}`, after);
      expect(state?.failures).toBe(failure);
      const expected = [0, 0, 0, 1000, 2000, 4000, 8000][failure - 1]!;
      expect(state!.lockedUntil).toBeGreaterThanOrEqual(before + expected);
      expect(state!.lockedUntil).toBeLessThanOrEqual(after + expected);
    }
    const locked = await errorOf(checkLoginThrottle(runtime, ['ip:other', key]));
    expect(locked?.status).toBe(429);
    expect(Number(locked?.headers?.['Retry-After'])).toBeGreaterThanOrEqual(7);
    await clearLoginFailures(runtime, [key]);
    expect(await errorOf(checkLoginThrottle(runtime, [key]))).toBeUndefined();
  });

  it('caps the lock-out at 15 minutes', async () => {
    for (let i = 0; i < 40; i++) await recordLoginFailure(runtime, ['user:capped']);
    const state = await runtime.store.limits.get<{ lockedUntil: number }>('login:user:capped', Date.now());
    expect(state!.lockedUntil - Date.now()).toBeLessThanOrEqual(15 * 60_000);
    expect(state!.lockedUntil - Date.now()).toBeGreaterThan(14 * 60_000);
  });

  it('locks by username as well as by address, and a success clears both', async () => {
    await upsertUser(runtime, 'editor', 'long-enough-password');
    for (let i = 0; i < 4; i++) await errorOf(logIn(runtime, { username: 'editor', password: 'nope' }, `2.2.2.${i}`));
    // A fresh address does not help: the username is locked.
    expect((await errorOf(logIn(runtime, { username: 'editor', password: 'long-enough-password' }, '3.3.3.3')))?.status).toBe(429);
    await clearLoginFailures(runtime, ['user:editor']);
    await logIn(runtime, { username: 'editor', password: 'long-enough-password' }, '3.3.3.3');
    expect(await runtime.store.limits.get('login:user:editor', Date.now())).toBeUndefined();
    expect(await runtime.store.limits.get('login:ip:3.3.3.3', Date.now())).toBeUndefined();
  });
});

describe('consumeRateLimit', () => {
  it('allows the limit, then answers 429 with Retry-After, per key', async () => {
    const rule = { name: 'test', limit: 3, windowMs: 60_000 };
    for (let i = 0; i < 3; i++) await consumeRateLimit(runtime, rule, 'a');
    const limited = await errorOf(consumeRateLimit(runtime, rule, 'a'));
    expect(limited?.status).toBe(429);
    const retryAfter = Number(limited?.headers?.['Retry-After']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await errorOf(consumeRateLimit(runtime, rule, 'b'))).toBeUndefined();
  });
});
