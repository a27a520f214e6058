/** GET /api/news-sources (list) and POST (create, 201; 409 for a URL already configured): admin only. */
import { actorOf, authorizedEndpoint, allowMethods, json, parseJsonBody } from '../../../api/http.ts';
import { newsSourceInputSchema } from '../../../schemas/source.ts';
import { createSource, listSources } from '../../../server/sources.ts';

export const GET = authorizedEndpoint('source.manage', async (_context, runtime) => json(await listSources(runtime)));

export const POST = authorizedEndpoint('source.manage', async (context, runtime, user) => {
  const input = await parseJsonBody(context.request, newsSourceInputSchema);
  return json(await createSource(runtime, input, actorOf(user)), 201);
});

export const ALL = allowMethods({ GET, POST });
