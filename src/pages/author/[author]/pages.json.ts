/**
 * /author/{slug}/pages.json: its page count, from which archive files draw their numbered navigation
 * (prerendered; regenerated when it changes).
 */
import type { APIRoute, GetStaticPaths } from 'astro';
import { respondWithMachineFile } from '../../../api/machine-files.ts';
import { listTermPaths } from '../../../server/archive-pages.ts';

export const prerender = true;

export const getStaticPaths = (async () =>
  (await listTermPaths('author')).filter((p) => p.page === 1).map((p) => ({ params: { author: p.slug } }))) satisfies GetStaticPaths;

export const GET: APIRoute = ({ params }) => respondWithMachineFile(`/author/${params.author}/pages.json`);
