/** Request pipeline for on-demand routes: origin check, staff and member sessions, security headers. */
import { defineMiddleware, sequence } from 'astro:middleware';
import { SESSION_COOKIE, validateSessionToken } from './server/auth.ts';
import { useDevRuntime } from './server/app.ts';
import { CROSS_ORIGIN_REFUSED, errorResponse, isCrossOrigin, logUnavailable, runtimeOf, unavailablePage } from './api/http.ts';
import { serviceUnavailableOf, type AppError } from './server/errors.ts';
import type { Logger } from './server/log.ts';
import {
  deleteMemberSessionCookie,
  deleteSessionCookie,
  deleteSignedInHint,
  setMemberSessionCookie,
  setSessionCookie,
  setSignedInHint,
} from './api/cookies.ts';
import { MEMBER_HINT_COOKIE, SIGNED_IN_HINT_COOKIE } from './lib/signed-in-hint.ts';
import { MEMBER_SESSION_COOKIE, validateMemberSessionToken } from './server/members/sessions.ts';
import { getConfig } from './config.ts';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * RFC 8058 one-click unsubscribe: the mailbox provider POSTs from its own servers, with whatever
 * Origin it likes. The token in the URL is the only authority there (no cookie, no session), so a
 * cross-site POST can do nothing a GET of the mail's link cannot: the only path exempt from the check.
 */
const ONE_CLICK_UNSUBSCRIBE = '/api/newsletter/unsubscribe';

/**
 * Refuses cross-origin state-changing requests. Browsers send Origin (and Sec-Fetch-Site) on every
 * such request; a client that sends neither is not a browser and cannot carry a victim's cookies.
 */
const checkOrigin = defineMiddleware(async (context, next) => {
  if (context.isPrerendered || !STATE_CHANGING.has(context.request.method)) return next();
  if (context.request.method === 'POST' && context.url.pathname === ONE_CLICK_UNSUBSCRIBE) return next();
  const { headers } = context.request;
  if (isCrossOrigin(headers.get('origin'), headers.get('sec-fetch-site'), [context.url.origin, getConfig().SITE_URL])) {
    return errorResponse(403, CROSS_ORIGIN_REFUSED);
  }
  return next();
});

/**
 * A dependency that is down while a request is handled: the API's JSON 503, or for a page a 503 page
 * saying so. Never a 401 or a sign-in redirect: the session may be fine, the lookup was not.
 */
function unavailableAnswer(pathname: string, error: AppError, log: Logger): Response {
  logUnavailable(log, error);
  return pathname === '/api' || pathname.startsWith('/api/')
    ? errorResponse(error.status, error.message, undefined, error.headers)
    : unavailablePage(error);
}

const loadSession = defineMiddleware(async (context, next) => {
  if (context.isPrerendered) return next();
  const token = context.cookies.get(SESSION_COOKIE)?.value;
  if (token) {
    const runtime = runtimeOf(context.locals);
    let result: Awaited<ReturnType<typeof validateSessionToken>>;
    try {
      result = await validateSessionToken(runtime, token);
    } catch (error) {
      // The cookie stays as it is: once the store answers again, the same session is valid.
      const unavailable = serviceUnavailableOf(error);
      if (!unavailable) throw error;
      return unavailableAnswer(context.url.pathname, unavailable, runtime.log);
    }
    if (result) {
      context.locals.user = result.user;
      context.locals.session = result.session;
      // The cookie's expiry follows the session's only when it slid forward.
      if (result.renewed) setSessionCookie(context.cookies, runtime.config, token, result.session.expiresAt);
      // Sessions from before the hint existed, or a hint the browser dropped: readers' islands need it to ask.
      else if (!context.cookies.has(SIGNED_IN_HINT_COOKIE)) setSignedInHint(context.cookies, runtime.config, result.session.expiresAt);
    } else {
      deleteSessionCookie(context.cookies, runtime.config);
    }
  } else if (context.cookies.has(SIGNED_IN_HINT_COOKIE)) {
    // A hint without a session (it expired, or was cleared elsewhere): stop islands asking.
    deleteSignedInHint(context.cookies, runtimeOf(context.locals).config);
  }
  return next();
});

/** A reader's session (issue 48), from its own cookie: sets locals.member, never locals.user. */
const loadMemberSession = defineMiddleware(async (context, next) => {
  if (context.isPrerendered) return next();
  const token = context.cookies.get(MEMBER_SESSION_COOKIE)?.value;
  if (token) {
    const runtime = runtimeOf(context.locals);
    let result: Awaited<ReturnType<typeof validateMemberSessionToken>>;
    try {
      result = await validateMemberSessionToken(runtime, token);
    } catch (error) {
      // As for staff: the cookie stays, and the same session is valid once the store answers again.
      const unavailable = serviceUnavailableOf(error);
      if (!unavailable) throw error;
      return unavailableAnswer(context.url.pathname, unavailable, runtime.log);
    }
    if (result) {
      context.locals.member = result.member;
      context.locals.memberSession = result.session;
      if (result.renewed) setMemberSessionCookie(context.cookies, runtime.config, token, result.session.expiresAt);
      else if (!context.cookies.has(MEMBER_HINT_COOKIE))
        setSignedInHint(context.cookies, runtime.config, result.session.expiresAt, MEMBER_HINT_COOKIE);
    } else {
      deleteMemberSessionCookie(context.cookies, runtime.config);
    }
  } else if (context.cookies.has(MEMBER_HINT_COOKIE)) {
    deleteSignedInHint(context.cookies, runtimeOf(context.locals).config, MEMBER_HINT_COOKIE);
  }
  return next();
});

/** An on-demand page (the admin, the editor) that met a dependency that is down answers the 503 page; API routes answer for themselves. */
const answerUnavailable = defineMiddleware(async (context, next) => {
  if (context.isPrerendered) return next();
  try {
    return await next();
  } catch (error) {
    const unavailable = serviceUnavailableOf(error);
    if (!unavailable) throw error;
    return unavailableAnswer(context.url.pathname, unavailable, runtimeOf(context.locals).log);
  }
});

/**
 * On-demand pages get their CSP from Astro as a header, which replaces the server's own; frame-ancestors
 * (which a <meta> cannot carry, and which the server sends everywhere else) is added back to it.
 */
const keepFrameAncestors = defineMiddleware(async (context, next) => {
  const response = await next();
  const policy = response.headers.get('content-security-policy');
  if (!context.isPrerendered && policy && !/frame-ancestors/i.test(policy)) {
    response.headers.set('content-security-policy', `${policy.replace(/;\s*$/, '')}; frame-ancestors 'none'`);
  }
  return response;
});

/** `astro dev` has no server script to hand requests the runtime: the process starts one on first use. */
const provideDevRuntime = defineMiddleware(async (context, next) => {
  // Never for the render thread's requests (they carry their data in locals.twin and need no store).
  if (import.meta.env.DEV && !context.isPrerendered && !context.locals.twin) context.locals.runtime ??= await useDevRuntime();
  return next();
});

/** Tells our HTTP server which route answered (the route pattern, a bounded label for the request metrics). */
const nameRoute = defineMiddleware((context, next) => {
  if (context.locals.request) context.locals.request.route = context.routePattern;
  return next();
});

export const onRequest = sequence(
  provideDevRuntime,
  nameRoute,
  keepFrameAncestors,
  checkOrigin,
  answerUnavailable,
  loadSession,
  loadMemberSession,
);
