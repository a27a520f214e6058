/**
 * /section/{section}/pages.json: the section's page count, from which archive pages draw their numbered navigation (prerendered;
 * regenerated when it changes).
 */
import type { APIRoute, GetStaticPaths } from 'astro';
import { SECTIONS } from '../../../schemas/common.ts';
import { respondWithMachineFile } from '../../../api/machine-files.ts';

export const prerender = true;

export const getStaticPaths = (() => SECTIONS.map((section) => ({ params: { section } }))) satisfies GetStaticPaths;

export const GET: APIRoute = ({ params }) => respondWithMachineFile(`/section/${params.section}/pages.json`);
