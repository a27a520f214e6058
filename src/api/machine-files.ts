/** What the feed, sitemap and robots endpoints (and their render twins) answer; bundled by Astro only (it uses import.meta.glob). */
import type { MachineFile } from '../schemas/pages.ts';
import { drawMachineFile, loadMachineFile } from '../server/publishing/feeds.ts';

/** Top-level pages that are not article data: found at build time, so a new static page joins the sitemap by itself. */
const NOT_IN_SITEMAP = new Set(['index', '404', '500', 'article-404', 'login', 'search']);
export const STATIC_PAGES: readonly string[] = Object.keys(import.meta.glob('../pages/*.astro'))
  .map((file) => file.replace(/^.*\/([^/]+)\.astro$/, '$1'))
  .filter((name) => !NOT_IN_SITEMAP.has(name))
  .sort()
  .map((name) => `/${name}`);

/** A machine file drawn from its data, as an endpoint answers it. */
export function respondWithFile(file: MachineFile): Response {
  const { body, contentType } = drawMachineFile(file, STATIC_PAGES);
  return new Response(body, { headers: { 'Content-Type': contentType } });
}

/** The build's answer for a machine-readable path, from the store (404 when it does not exist). */
export async function respondWithMachineFile(pathname: string): Promise<Response> {
  const load = await loadMachineFile(pathname);
  if (load.kind !== 'file') return new Response('Not found', { status: 404, headers: { 'Content-Type': 'text/plain; charset=utf-8' } });
  return respondWithFile(load.file);
}
