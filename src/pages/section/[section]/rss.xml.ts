/** /section/{section}/rss.xml: RSS 2.0 feed of a section's 50 newest articles (prerendered; regenerated after each publish). */
import type { APIRoute, GetStaticPaths } from 'astro';
import { SECTIONS } from '../../../schemas/common.ts';
import { respondWithMachineFile } from '../../../api/machine-files.ts';

export const prerender = true;

export const getStaticPaths = (() => SECTIONS.map((section) => ({ params: { section } }))) satisfies GetStaticPaths;

export const GET: APIRoute = ({ params }) => respondWithMachineFile(`/section/${params.section}/rss.xml`);
