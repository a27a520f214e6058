/** Reads the signed-in hint cookie in the browser: without it nobody is signed in, so GET /api/auth/me need not be asked. */

/**
 * A non-secret cookie ("1") that says a session cookie was set: readable by scripts (the session
 * cookie is httpOnly), so islands ask GET /api/auth/me only when someone may be signed in. It lives
 * here, not with the auth schemas: every island reads it, and importing it from there put zod and
 * the auth schemas on every reader's page (docs/performance.md, 2026-11-25 entry on npm run bench).
 */
export const SIGNED_IN_HINT_COOKIE = 'signed_in';

export function hasSignedInHint(): boolean {
  if (typeof document === 'undefined') return false;
  return document.cookie.split(';').some((part) => part.trim() === `${SIGNED_IN_HINT_COOKIE}=1`);
}
