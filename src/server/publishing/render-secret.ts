/**
 * The secret that lets the regeneration worker, and only it, call the twin endpoints of the machine
 * files (feeds, sitemaps, robots.txt, pages.json); page twins take their data from the render thread.
 * It is random per process and kept on globalThis: the worker (loaded by the server script) and the
 * twin routes (inside the Astro bundle) are two copies of this module in one process.
 */
import { randomBytes } from 'node:crypto';
import { isSameSecret } from '../../security/secrets.ts';

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

/** Whether a render-secret header value is this process's secret (so the caller is its regeneration worker). */
export function isRenderSecret(given: string | null | undefined): boolean {
  return isSameSecret(given, registry[KEY]);
}
