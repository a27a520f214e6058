/** Reads the signed-in hint cookie in the browser: without it nobody is signed in, so GET /api/auth/me need not be asked. */
import { SIGNED_IN_HINT_COOKIE } from '../schemas/auth.ts';

export function hasSignedInHint(): boolean {
  if (typeof document === 'undefined') return false;
  return document.cookie.split(';').some((part) => part.trim() === `${SIGNED_IN_HINT_COOKIE}=1`);
}
