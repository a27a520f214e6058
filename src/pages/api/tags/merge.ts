/** POST /api/tags/merge { from, into } (admins, editors): retags every article; from's addresses answer 301 to into's. */
import { actorOf, allowMethods, authorizedEndpoint, json, parseJsonBody } from '../../../api/http.ts';
import { tagMergeInputSchema } from '../../../schemas/taxonomy.ts';
import { mergeTags } from '../../../server/tags.ts';

export const POST = authorizedEndpoint('tag.manage', async (context, runtime, user) =>
  json(await mergeTags(runtime, await parseJsonBody(context.request, tagMergeInputSchema), actorOf(user))),
);

export const ALL = allowMethods({ POST });
