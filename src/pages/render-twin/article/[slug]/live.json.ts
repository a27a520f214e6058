/** On-demand twin of /article/{slug}/live.json for the render thread: draws the file from the worker's data; anyone else gets 404. */
import type { APIRoute } from 'astro';
import { respondToFileTwin } from '../../../../api/render-twin.ts';

export const prerender = false;

export const GET: APIRoute = ({ locals }) => respondToFileTwin(locals, ['live-json']);
