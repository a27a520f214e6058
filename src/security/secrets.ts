/** Hashing, signing and comparing secrets (session, subscriber and upload tokens, internal keys): the one place they are done. */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** The SHA-256 of a token in hex: what is stored and looked up instead of the token itself. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The HMAC-SHA-256 of `message` under `secret`: a key or signature that never carries the secret itself. */
export function signMessage(secret: string, message: string, encoding: 'hex' | 'base64url' = 'hex'): string {
  return createHmac('sha256', secret).update(message).digest(encoding);
}

/**
 * Whether a presented secret equals the expected one, in constant time; a missing or empty one never does.
 * Compared as digests, so neither where they differ nor the expected length shows in the timing.
 */
export function isSameSecret(given: string | null | undefined, expected: string | null | undefined): boolean {
  if (!given || !expected) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}
