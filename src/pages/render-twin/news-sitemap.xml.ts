/** On-demand twin of /news-sitemap.xml for the regeneration worker; outside callers get 404. */
import type { APIRoute } from 'astro';
import { respondToTwin } from '../../server/publishing/twin.ts';
import { respondWithMachineFile } from '../../server/publishing/endpoints.ts';

export const prerender = false;

export const GET: APIRoute = ({ request }) => respondToTwin(request, () => respondWithMachineFile('/news-sitemap.xml'));
