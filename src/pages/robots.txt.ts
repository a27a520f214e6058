/** robots.txt: crawl rules and the sitemaps, with the configured SITE_URL (prerendered). */
import type { APIRoute } from 'astro';
import { respondWithMachineFile } from '../api/machine-files.ts';

export const prerender = true;

export const GET: APIRoute = () => respondWithMachineFile('/robots.txt');
