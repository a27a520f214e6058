/** POST /api/news-sources/{id}/fetch: fetches an RSS source now and answers { message } ('Fetched 12 items, 9 new'). */
import { authorizedEndpoint, allowMethods, expectEmptyBody, json, param } from '../../../../api/http.ts';
import { fetchNewsSource } from '../../../../server/ingest/feed-fetch.ts';

export const POST = authorizedEndpoint('source.manage', async (context, runtime) => {
  await expectEmptyBody(context.request);
  const outcome = await fetchNewsSource(runtime, param(context, 'id'));
  return json({ message: outcome.message });
});

export const ALL = allowMethods({ POST });
