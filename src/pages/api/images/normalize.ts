/** POST /api/images/normalize { imageUrl }: web-ready hero images; answers { path } for heroImage. */
import { authorizedEndpoint, allowMethods, json, parseJsonBody } from '../../../api/http.ts';
import { normalizeImageInputSchema } from '../../../schemas/misc.ts';
import { normalizeImage } from '../../../server/images/normalize.ts';

export const POST = authorizedEndpoint('image.upload', async (context, runtime) => {
  const input = await parseJsonBody(context.request, normalizeImageInputSchema);
  return json(await normalizeImage(runtime, input.imageUrl));
});

export const ALL = allowMethods({ POST });
