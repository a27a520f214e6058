/** GET /api/newsletter/subscribers?q=&status=&page=&pageSize=: the dashboard's list, counts and last briefing (signed-in staff only). */
import { authorizedEndpoint, allowMethods, json, parseQuery } from '../../../../api/http.ts';
import { subscriberListQuerySchema } from '../../../../schemas/newsletter.ts';
import { listSubscribers } from '../../../../server/newsletter.ts';

export const GET = authorizedEndpoint('subscriber.manage', async (context, runtime) =>
  json(await listSubscribers(runtime, parseQuery(context.url, subscriberListQuerySchema))),
);

export const ALL = allowMethods({ GET });
