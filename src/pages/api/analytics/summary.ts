/** GET /api/analytics/summary?from&to&section: views per newsroom day, the period before, reading now, devices, subscribers, publishing. */
import { allowMethods, authorizedEndpoint, json, parseQuery } from '../../../api/http.ts';
import { summaryQuerySchema } from '../../../schemas/analytics.ts';
import { summarize } from '../../../server/analytics/reports.ts';

export const GET = authorizedEndpoint('analytics.read', async (context, runtime, user) =>
  json(await summarize(runtime, user, parseQuery(context.url, summaryQuerySchema))),
);

export const ALL = allowMethods({ GET });
