/** rss.xml: RSS 2.0 feed of the 50 newest articles site-wide (prerendered; regenerated after each publish). */
import type { APIRoute } from 'astro';
import { respondWithMachineFile } from '../api/machine-files.ts';

export const prerender = true;

export const GET: APIRoute = () => respondWithMachineFile('/rss.xml');
