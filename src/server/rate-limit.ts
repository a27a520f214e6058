/** Per-key rate limits (fixed windows) and the login throttle (growing delays), over the store's limits. */
import type { Runtime } from './runtime.ts';
import { tooManyRequests } from './errors.ts';

export type RateLimitRule = { name: string; limit: number; windowMs: number };

/** Limits per client IP; generous for people, tight for scripts. */
export const RATE_LIMITS = {
  comment: { name: 'comment', limit: 5, windowMs: 60_000 },
  vote: { name: 'vote', limit: 60, windowMs: 60_000 },
  newsletter: { name: 'newsletter', limit: 5, windowMs: 60_000 },
  pageview: { name: 'pageview', limit: 120, windowMs: 60_000 },
  upload: { name: 'upload', limit: 30, windowMs: 60_000 },
  /** Members' sign-in links (issue 48): per client IP, and per address (keyed by its hash) so nobody's inbox is flooded. */
  memberSignIn: { name: 'member-sign-in', limit: 10, windowMs: 15 * 60_000 },
  memberSignInAddress: { name: 'member-sign-in-address', limit: 5, windowMs: 60 * 60_000 },
  /** Checkouts and portal sessions (issue 48), per member: each makes objects at Stripe. */
  billing: { name: 'billing', limit: 10, windowMs: 60_000 },
} satisfies Record<string, RateLimitRule>;

/** Counts one hit; throws a 429 AppError with Retry-After once the window is full. */
export async function consumeRateLimit(runtime: Runtime, rule: RateLimitRule, key: string): Promise<void> {
  const now = Date.now();
  const { count, resetAt } = await runtime.store.limits.hit(`rl:${rule.name}:${key}`, rule.windowMs, now);
  if (count > Math.ceil(rule.limit * runtime.config.RATE_LIMIT_FACTOR)) throw tooManyRequests((resetAt - now) / 1000);
}

type Throttle = { failures: number; lockedUntil: number };

const THROTTLE_FREE_FAILURES = 3;
const THROTTLE_MAX_DELAY_MS = 15 * 60_000;
const THROTTLE_MEMORY_MS = 60 * 60_000;

/** Throws 429 while any of the keys (IP, username) is locked out. */
export async function checkLoginThrottle(runtime: Runtime, keys: string[]): Promise<void> {
  const now = Date.now();
  let wait = 0;
  for (const key of keys) {
    const throttle = await runtime.store.limits.get<Throttle>(`login:${key}`, now);
    if (throttle && throttle.lockedUntil > now) wait = Math.max(wait, throttle.lockedUntil - now);
  }
  if (wait > 0) throw tooManyRequests(wait / 1000, 'Too many sign-in attempts. Please wait before trying again.');
}

/**
 * After a failure: 3 free tries, then 1 s, 2 s, 4 s... up to 15 minutes, per key. Each key's count
 * moves in one step of the store (`limits.update`), so guesses reaching two servers at once are all
 * counted. With `refuseLocked`, a key found locked is left as it is and the attempt answers 429.
 */
export async function recordLoginFailure(runtime: Runtime, keys: string[], refuseLocked = false): Promise<void> {
  const now = Date.now();
  let wait = 0;
  for (const key of keys) {
    await runtime.store.limits.update<Throttle>(`login:${key}`, now, (previous = { failures: 0, lockedUntil: 0 }) => {
      if (refuseLocked && previous.lockedUntil > now) {
        wait = Math.max(wait, previous.lockedUntil - now);
        return { value: previous, expiresAt: now + THROTTLE_MEMORY_MS };
      }
      const failures = previous.failures + 1;
      const delay =
        failures <= THROTTLE_FREE_FAILURES ? 0 : Math.min(THROTTLE_MAX_DELAY_MS, 1000 * 2 ** (failures - THROTTLE_FREE_FAILURES - 1));
      return { value: { failures, lockedUntil: now + delay }, expiresAt: now + THROTTLE_MEMORY_MS };
    });
  }
  if (wait > 0) throw tooManyRequests(wait / 1000, 'Too many sign-in attempts. Please wait before trying again.');
}

// Check and record must be one step: guesses sent together would all pass the check while the first
// password hash is still being verified. The queue serialises this process; across servers on one
// database the record re-checks the lock inside its atomic update (refuseLocked).
let loginAttempts: Promise<unknown> = Promise.resolve();

/**
 * Throws 429 while any key is locked out; otherwise counts this attempt as a failure before the
 * password is checked (clearLoginFailures undoes it on success), one attempt at a time.
 */
export function reserveLoginAttempt(runtime: Runtime, keys: string[]): Promise<void> {
  const attempt = loginAttempts.then(async () => {
    await checkLoginThrottle(runtime, keys);
    await recordLoginFailure(runtime, keys, true);
  });
  loginAttempts = attempt.catch(() => {});
  return attempt;
}

export async function clearLoginFailures(runtime: Runtime, keys: string[]): Promise<void> {
  for (const key of keys) await runtime.store.limits.delete(`login:${key}`);
}
