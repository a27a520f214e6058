/** GET /api/members/comment-policy: whether commenting needs a member sign-in (public: the comments island asks before its form). */
import { allowMethods, endpoint, json } from '../../../api/http.ts';
import { getMemberSettings } from '../../../server/members/settings.ts';

export const GET = endpoint(async (_context, runtime) => json({ membersOnly: (await getMemberSettings(runtime)).commentsMembersOnly }));

export const ALL = allowMethods({ GET });
