/** GET /api/analytics/sparklines?ids=a,b,c&days=14: views per newsroom day of up to 100 articles (an author: their own). */
import { allowMethods, authorizedEndpoint, json, parseQuery } from '../../../api/http.ts';
import { sparklinesQuerySchema } from '../../../schemas/analytics.ts';
import { sparklines } from '../../../server/analytics/reports.ts';

export const GET = authorizedEndpoint('analytics.read', async (context, runtime, user) =>
  json(await sparklines(runtime, user, parseQuery(context.url, sparklinesQuerySchema))),
);

export const ALL = allowMethods({ GET });
