/** Reads the signed-in hint cookies in the browser: without one nobody is signed in, so no island asks who is. */

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

/** The member's twin of the hint (issue 48): "a member session cookie was set", so islands ask GET /api/members/me. */
export const MEMBER_HINT_COOKIE = 'member_signed_in';

export function hasMemberHint(): boolean {
  if (typeof document === 'undefined') return false;
  return document.cookie.split(';').some((part) => part.trim() === `${MEMBER_HINT_COOKIE}=1`);
}
