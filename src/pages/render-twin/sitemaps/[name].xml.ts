/** On-demand twin of /sitemaps/{name}.xml for the regeneration worker; a month without articles is "missing"; outside callers get 404. */
import type { APIRoute } from 'astro';
import { respondToTwin } from '../../../api/render-twin.ts';
import { respondWithMachineFile } from '../../../api/machine-files.ts';

export const prerender = false;

export const GET: APIRoute = ({ request, params }) => respondToTwin(request, () => respondWithMachineFile(`/sitemaps/${params.name}.xml`));
