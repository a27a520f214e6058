/** sitemap.xml: the sitemap index (pages sitemap and one child per month of articles; prerendered, regenerated after each publish). */
import type { APIRoute } from 'astro';
import { respondWithMachineFile } from '../api/machine-files.ts';

export const prerender = true;

export const GET: APIRoute = () => respondWithMachineFile('/sitemap.xml');
