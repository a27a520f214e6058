/** PUT /api/news-sources/{id} ({enabled}) and DELETE (204): admin only. */
import { actorOf, authorizedEndpoint, allowMethods, json, noContent, param, parseJsonBody } from '../../../../api/http.ts';
import { newsSourceUpdateSchema } from '../../../../schemas/source.ts';
import { deleteSource, setSourceEnabled } from '../../../../server/sources.ts';

export const PUT = authorizedEndpoint('source.manage', async (context, runtime) => {
  const { enabled } = await parseJsonBody(context.request, newsSourceUpdateSchema);
  return json(await setSourceEnabled(runtime, param(context, 'id'), enabled));
});

export const DELETE = authorizedEndpoint('source.manage', async (context, runtime, user) => {
  await deleteSource(runtime, param(context, 'id'), actorOf(user));
  return noContent();
});

export const ALL = allowMethods({ PUT, DELETE });
