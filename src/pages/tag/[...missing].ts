/**
 * /tag/... when no file is served there: a tag merged into another answers 301 to its page (the merge
 * is a record in the store, so this outlives every rebuild); anything else is the site's 404.
 */
import type { APIRoute } from 'astro';
import { runtimeOf } from '../../api/http.ts';
import { readTagRules } from '../../server/tag-rules.ts';
import { mergedTagLocation } from '../../server/archive-pages.ts';

export const prerender = false;

export const ALL: APIRoute = async ({ locals, url }) => {
  const location = mergedTagLocation(await readTagRules(runtimeOf(locals).store), url.pathname);
  if (!location) return new Response(null, { status: 404 });
  // Permanent, but cached briefly: an editor may undo a merge by merging back.
  return new Response(null, { status: 301, headers: { Location: location, 'Cache-Control': 'public, max-age=300' } });
};
