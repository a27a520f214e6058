/** sitemap.xml: the section listings and every published article (prerendered; regenerated after each publish). */
import type { APIRoute } from 'astro';
import { respondWithMachineFile } from '../server/publishing/endpoints.ts';

export const prerender = true;

export const GET: APIRoute = () => respondWithMachineFile('/sitemap.xml');
