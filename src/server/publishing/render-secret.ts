/**
 * The secret that lets the regeneration worker, and only it, call the on-demand render twins.
 * It is random per process and kept on globalThis: the worker (loaded by the server script) and the
 * twin routes (inside the Astro bundle) are two copies of this module in one process.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';

/** Folder of the twin routes: /render-twin/article/x renders what /article/x shows. */
export const TWIN_PREFIX = '/render-twin';
export const RENDER_SECRET_HEADER = 'x-meridian-render';
/** Set by a twin when the page does not exist for the current data, so the worker deletes its file. */
export const RENDER_RESULT_HEADER = 'x-meridian-render-result';

const KEY = Symbol.for('meridian-news.render-secret');
const registry = globalThis as unknown as { [KEY]?: string };

/** This process's render secret. */
export function renderSecret(): string {
  registry[KEY] ??= randomBytes(32).toString('base64url');
  return registry[KEY];
}

/** Whether a request comes from this process's regeneration worker. */
export function isInternalRender(request: Request): boolean {
  const given = request.headers.get(RENDER_SECRET_HEADER);
  const expected = registry[KEY];
  if (!given || !expected) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The twin's answer to outside callers: the site's ordinary 404 (Astro renders the 404 page for an empty 404). */
export function refuseOutsideCaller(): Response {
  return new Response(null, { status: 404 });
}

/** The twin's answer when the page does not exist for the current data (the worker deletes the file). */
export function answerMissing(): Response {
  return new Response('missing', { status: 404, headers: { [RENDER_RESULT_HEADER]: 'missing', 'Content-Type': 'text/plain' } });
}
