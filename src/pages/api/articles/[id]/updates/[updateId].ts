/** PUT /api/articles/{id}/updates/{updateId} (roles that may edit the article): changes a live update; DELETE (204) removes it. */
import { actorOf, allowMethods, authorizedEndpoint, json, noContent, param, parseJsonBody } from '../../../../../api/http.ts';
import { liveUpdateEditSchema } from '../../../../../schemas/live.ts';
import { deleteLiveUpdate, editLiveUpdate } from '../../../../../server/live.ts';

export const PUT = authorizedEndpoint('article.edit', async (context, runtime, user) => {
  const edit = await parseJsonBody(context.request, liveUpdateEditSchema);
  return json(await editLiveUpdate(runtime, param(context, 'id'), param(context, 'updateId'), edit, actorOf(user)));
});

export const DELETE = authorizedEndpoint('article.edit', async (context, runtime, user) => {
  await deleteLiveUpdate(runtime, param(context, 'id'), param(context, 'updateId'), actorOf(user));
  return noContent();
});

export const ALL = allowMethods({ PUT, DELETE });
