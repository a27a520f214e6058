/**
 * /article/{slug} when no page is served there (never published, unpublished or deleted): the static
 * server found no file and handed the request on, so answer 404 with the prerendered 'Article Not Found'.
 */
import type { APIRoute } from 'astro';
import { runtimeOf } from '../../api/http.ts';
import { readMissingArticlePage } from '../../server/publishing/missing-article.ts';

export const prerender = false;

export const ALL: APIRoute = async ({ locals }) => {
  const page = await readMissingArticlePage(runtimeOf(locals));
  // Without the file (astro dev, an old build), Astro answers its generic 404 screen.
  if (!page) return new Response(null, { status: 404 });
  return new Response(new Uint8Array(page), {
    status: 404,
    // As short as the pages' own cache: the article may be published at this address any moment.
    headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'public, max-age=10' },
  });
};
