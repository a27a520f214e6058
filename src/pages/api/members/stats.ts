/** GET /api/members/stats?from&to: members, paying and comped members and MRR per newsroom day (admins and editors). */
import { allowMethods, authorizedEndpoint, json, parseQuery } from '../../../api/http.ts';
import { memberStatsQuerySchema } from '../../../schemas/member-admin.ts';
import { memberStats } from '../../../server/members/stats.ts';

export const GET = authorizedEndpoint('member.read', async (context, runtime) =>
  json(await memberStats(runtime, parseQuery(context.url, memberStatsQuerySchema))),
);

export const ALL = allowMethods({ GET });
