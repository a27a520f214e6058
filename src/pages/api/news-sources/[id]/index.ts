/** PUT /api/news-sources/{id} ({enabled}) and DELETE (204): admin only. */
import { adminEndpoint, allowMethods, json, noContent, param, parseJsonBody } from '../../../../api/http.ts';
import { newsSourceUpdateSchema } from '../../../../schemas/source.ts';
import { deleteSource, setSourceEnabled } from '../../../../server/sources.ts';

export const PUT = adminEndpoint(async (context, runtime) => {
  const { enabled } = await parseJsonBody(context.request, newsSourceUpdateSchema);
  return json(await setSourceEnabled(runtime, param(context, 'id'), enabled));
});

export const DELETE = adminEndpoint(async (context, runtime) => {
  await deleteSource(runtime, param(context, 'id'));
  return noContent();
});

export const ALL = allowMethods({ PUT, DELETE });
