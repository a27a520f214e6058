/** On-demand twin of /sitemaps/{name}.xml for the render thread: draws the file from the data the worker loaded; anyone else gets 404. */
import type { APIRoute } from 'astro';
import { respondToFileTwin } from '../../../api/render-twin.ts';

export const prerender = false;

export const GET: APIRoute = ({ locals }) => respondToFileTwin(locals, ['pages-sitemap', 'archives-sitemap', 'month-sitemap']);
