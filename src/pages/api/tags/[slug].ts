/** PUT /api/tags/{slug} { hidden } (admins, editors): hides a junk tag (no page, no link, not in sitemaps) or shows it again. */
import { actorOf, allowMethods, authorizedEndpoint, json, param, parseJsonBody, parseWith } from '../../../api/http.ts';
import { tagUpdateInputSchema, termSlugSchema } from '../../../schemas/taxonomy.ts';
import { setTagHidden } from '../../../server/tags.ts';

export const PUT = authorizedEndpoint('tag.manage', async (context, runtime, user) => {
  const slug = parseWith(termSlugSchema, param(context, 'slug'), 'Invalid tag');
  const { hidden } = await parseJsonBody(context.request, tagUpdateInputSchema);
  return json(await setTagHidden(runtime, slug, hidden, actorOf(user)));
});

export const ALL = allowMethods({ PUT });
