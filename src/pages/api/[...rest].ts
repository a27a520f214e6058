/** Any /api path no route matches: a JSON 404 rather than the HTML not-found page. */
import type { APIRoute } from 'astro';
import { errorResponse } from '../../api/http.ts';

export const ALL: APIRoute = (context) => errorResponse(404, `No API route for ${context.url.pathname}`);
