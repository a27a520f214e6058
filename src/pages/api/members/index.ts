/** GET /api/members?q=&status=&page=&pageSize=: the admin's list of members, with the counts by status (admins and editors). */
import { allowMethods, authorizedEndpoint, json, parseQuery } from '../../../api/http.ts';
import { memberListQuerySchema } from '../../../schemas/member.ts';
import { listMembers } from '../../../server/members/admin.ts';

export const GET = authorizedEndpoint('member.read', async (context, runtime) =>
  json(await listMembers(runtime, parseQuery(context.url, memberListQuerySchema))),
);

export const ALL = allowMethods({ GET });
