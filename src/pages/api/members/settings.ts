/** GET|PUT /api/members/settings (admins): members' settings beside the plans, such as members-only comments. */
import { allowMethods, authorizedEndpoint, json, parseJsonBody } from '../../../api/http.ts';
import { memberSettingsSchema } from '../../../schemas/member.ts';
import { getMemberSettings, saveMemberSettings } from '../../../server/members/settings.ts';

// Admin-only like the rest of the audience's data (the newsletter's subscribers): the same permission.
export const GET = authorizedEndpoint('subscriber.manage', async (_context, runtime) => json(await getMemberSettings(runtime)));

export const PUT = authorizedEndpoint('subscriber.manage', async (context, runtime) =>
  json(await saveMemberSettings(runtime, await parseJsonBody(context.request, memberSettingsSchema))),
);

export const ALL = allowMethods({ GET, PUT });
