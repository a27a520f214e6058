/** GET|PUT /api/members/settings (admins: member.manage): members' settings beside the plans, such as members-only comments. */
import { allowMethods, authorizedEndpoint, json, parseJsonBody } from '../../../api/http.ts';
import { memberSettingsSchema } from '../../../schemas/member.ts';
import { getMemberSettings, saveMemberSettings } from '../../../server/members/settings.ts';

export const GET = authorizedEndpoint('member.manage', async (_context, runtime) => json(await getMemberSettings(runtime)));

export const PUT = authorizedEndpoint('member.manage', async (context, runtime) =>
  json(await saveMemberSettings(runtime, await parseJsonBody(context.request, memberSettingsSchema))),
);

export const ALL = allowMethods({ GET, PUT });
