/** news-sitemap.xml (Google News): articles published in the last two days (prerendered; regenerated after each publish). */
import type { APIRoute } from 'astro';
import { respondWithMachineFile } from '../api/machine-files.ts';

export const prerender = true;

export const GET: APIRoute = () => respondWithMachineFile('/news-sitemap.xml');
