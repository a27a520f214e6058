/** GET /api/analytics/referrers?from&to&section&limit: where readers came from, by kind and host. */
import { allowMethods, authorizedEndpoint, json, parseQuery } from '../../../api/http.ts';
import { referrersQuerySchema } from '../../../schemas/analytics.ts';
import { referrerReport } from '../../../server/analytics/reports.ts';

export const GET = authorizedEndpoint('analytics.read', async (context, runtime, user) =>
  json(await referrerReport(runtime, user, parseQuery(context.url, referrersQuerySchema))),
);

export const ALL = allowMethods({ GET });
