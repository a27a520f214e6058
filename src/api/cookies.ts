/** Cookie settings for the staff and member sessions, their signed-in hints and the anonymous visitor id. */
import type { AstroCookies } from 'astro';
import { encodeBase32LowerCaseNoPadding } from '@oslojs/encoding';
import type { Config } from '../config.ts';
import { SESSION_COOKIE, SESSION_LIFETIME_MS } from '../server/auth.ts';
import { MEMBER_HINT_COOKIE, SIGNED_IN_HINT_COOKIE } from '../lib/signed-in-hint.ts';
import { MEMBER_SESSION_COOKIE } from '../server/members/sessions.ts';

export const VISITOR_COOKIE = 'vid';

function secure(config: Config): boolean {
  return config.SITE_URL.startsWith('https:');
}

/** Sets the session cookie and its signed-in hint, with the same lifetime (at sign-in and when the session slides forward). */
export function setSessionCookie(cookies: AstroCookies, config: Config, token: string, expiresAt: string): void {
  cookies.set(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    secure: secure(config),
    path: '/',
    expires: new Date(expiresAt),
    maxAge: Math.floor(SESSION_LIFETIME_MS / 1000),
  });
  setSignedInHint(cookies, config, expiresAt);
}

/** Clears the session cookie and the hint (logout, or a session found invalid). */
export function deleteSessionCookie(cookies: AstroCookies, config: Config): void {
  cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'lax', secure: secure(config), path: '/', maxAge: 0 });
  deleteSignedInHint(cookies, config);
}

/** The hint carries no secret, only "a session cookie was set"; scripts must read it, so it is not httpOnly. It ends with the session. */
export function setSignedInHint(cookies: AstroCookies, config: Config, expiresAt: string, name = SIGNED_IN_HINT_COOKIE): void {
  const maxAge = Math.max(0, Math.floor((Date.parse(expiresAt) - Date.now()) / 1000));
  cookies.set(name, '1', {
    httpOnly: false,
    sameSite: 'lax',
    secure: secure(config),
    path: '/',
    expires: new Date(expiresAt),
    maxAge,
  });
}

export function deleteSignedInHint(cookies: AstroCookies, config: Config, name = SIGNED_IN_HINT_COOKIE): void {
  cookies.set(name, '', { httpOnly: false, sameSite: 'lax', secure: secure(config), path: '/', maxAge: 0 });
}

/** Sets a reader's session cookie (issue 48) and its hint, like the staff's: HttpOnly, SameSite=Lax, Secure on https. */
export function setMemberSessionCookie(cookies: AstroCookies, config: Config, token: string, expiresAt: string): void {
  cookies.set(MEMBER_SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    secure: secure(config),
    path: '/',
    expires: new Date(expiresAt),
    maxAge: Math.floor(SESSION_LIFETIME_MS / 1000),
  });
  setSignedInHint(cookies, config, expiresAt, MEMBER_HINT_COOKIE);
}

/** Clears a reader's session cookie and its hint (sign-out, account deleted, or a session found invalid). */
export function deleteMemberSessionCookie(cookies: AstroCookies, config: Config): void {
  cookies.set(MEMBER_SESSION_COOKIE, '', { httpOnly: true, sameSite: 'lax', secure: secure(config), path: '/', maxAge: 0 });
  deleteSignedInHint(cookies, config, MEMBER_HINT_COOKIE);
}

/** The visitor id that keys one vote per article per browser; created on first vote. */
export function ensureVisitorId(cookies: AstroCookies, config: Config): string {
  const existing = cookies.get(VISITOR_COOKIE)?.value;
  if (existing && /^[a-z2-7]{26}$/.test(existing)) return existing;
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  const id = encodeBase32LowerCaseNoPadding(bytes);
  cookies.set(VISITOR_COOKIE, id, { httpOnly: true, sameSite: 'lax', secure: secure(config), path: '/', maxAge: 400 * 24 * 3600 });
  return id;
}

export function readVisitorId(cookies: AstroCookies): string | undefined {
  const value = cookies.get(VISITOR_COOKIE)?.value;
  return value && /^[a-z2-7]{26}$/.test(value) ? value : undefined;
}
