/**
 * /tag/{slug}/pages.json: its page count, from which archive files draw their numbered navigation
 * (prerendered; regenerated when it changes).
 */
import type { APIRoute, GetStaticPaths } from 'astro';
import { respondWithMachineFile } from '../../../api/machine-files.ts';
import { listTermPaths } from '../../../server/archive-pages.ts';

export const prerender = true;

export const getStaticPaths = (async () =>
  (await listTermPaths('tag')).filter((p) => p.page === 1).map((p) => ({ params: { tag: p.slug } }))) satisfies GetStaticPaths;

export const GET: APIRoute = ({ params }) => respondWithMachineFile(`/tag/${params.tag}/pages.json`);
