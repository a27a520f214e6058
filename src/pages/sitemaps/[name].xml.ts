/**
 * /sitemaps/pages.xml, /sitemaps/archives.xml (tag and author pages) and /sitemaps/{YYYY-MM}.xml: the children of the
 * sitemap index, one per month of articles (prerendered; regenerated after each publish).
 */
import type { APIRoute, GetStaticPaths } from 'astro';
import { respondWithMachineFile } from '../../api/machine-files.ts';
import { listPeriods } from '../../server/publishing/feeds.ts';
import { useReadStore } from '../../server/runtime.ts';

export const prerender = true;

export const getStaticPaths = (async () => {
  const periods = await listPeriods(await useReadStore());
  return [{ params: { name: 'pages' } }, { params: { name: 'archives' } }, ...periods.map(({ period }) => ({ params: { name: period } }))];
}) satisfies GetStaticPaths;

export const GET: APIRoute = ({ params }) => respondWithMachineFile(`/sitemaps/${params.name}.xml`);
