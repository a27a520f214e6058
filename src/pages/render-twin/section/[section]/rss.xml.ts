/** On-demand twin of /section/{section}/rss.xml for the regeneration worker; outside callers get 404. */
import type { APIRoute } from 'astro';
import { respondToTwin } from '../../../../api/render-twin.ts';
import { respondWithMachineFile } from '../../../../api/machine-files.ts';

export const prerender = false;

export const GET: APIRoute = ({ request, params }) =>
  respondToTwin(request, () => respondWithMachineFile(`/section/${params.section}/rss.xml`));
