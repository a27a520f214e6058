/** GET /api/members/me/export: the member's data as a JSON attachment (account, comments, newsletter). */
import { allowMethods, endpoint } from '../../../../api/http.ts';
import { requireMember } from '../../../../api/members.ts';
import { exportMemberData } from '../../../../server/members/accounts.ts';

export const GET = endpoint(async (context, runtime) => {
  const data = await exportMemberData(runtime, requireMember(context));
  const day = data.exportedAt.slice(0, 10);
  return new Response(`${JSON.stringify(data, null, 2)}\n`, {
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Disposition': `attachment; filename="my-account-${day}.json"`,
      'Cache-Control': 'no-store',
    },
  });
});

export const ALL = allowMethods({ GET });
