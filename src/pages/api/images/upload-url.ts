/** POST /api/images/upload-url: a one-time signed URL on this server to PUT an image to (valid 10 minutes). */
import { authorizedEndpoint, allowMethods, expectEmptyBody, json } from '../../../api/http.ts';
import { createUploadUrl } from '../../../server/images/upload-urls.ts';

export const POST = authorizedEndpoint('image.upload', async (context, runtime) => {
  await expectEmptyBody(context.request);
  return json({ uploadURL: await createUploadUrl(runtime) });
});

export const ALL = allowMethods({ POST });
