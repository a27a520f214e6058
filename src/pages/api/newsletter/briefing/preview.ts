/**
 * GET /api/newsletter/briefing/preview: the briefing as it would go out now (signed-in staff only).
 * `?format=html` answers the mail's HTML itself, under a policy that runs no script and loads only images.
 */
import { z } from 'zod';
import { authorizedEndpoint, allowMethods, json, parseQuery } from '../../../../api/http.ts';
import { previewBriefing } from '../../../../server/briefing/briefing.ts';

const querySchema = z.object({ format: z.enum(['json', 'html']).default('json') });

export const GET = authorizedEndpoint('subscriber.manage', async (context, runtime) => {
  const { format } = parseQuery(context.url, querySchema);
  const preview = await previewBriefing(runtime);
  if (format === 'json') return json(preview);
  return new Response(preview.html, {
    headers: {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Content-Security-Policy':
        "default-src 'none'; img-src http: https: data:; style-src 'unsafe-inline'; frame-ancestors 'self'; base-uri 'none'; form-action 'none'",
      'X-Frame-Options': 'SAMEORIGIN',
    },
  });
});

export const ALL = allowMethods({ GET });
