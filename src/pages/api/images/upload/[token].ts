/**
 * PUT /api/images/upload/{token}?expires=...&sig=...: receives the raw image. No session: the
 * signature is the authority (the origin check of the middleware still applies).
 */
import { Readable } from 'node:stream';
import { bodyTooLarge, declaredLength, limitBody } from '../../../../api/body-limit.ts';
import { allowMethods, endpoint, noContent, param } from '../../../../api/http.ts';
import { IMAGE_TOO_LARGE, MAX_IMAGE_BYTES, receiveUpload } from '../../../../server/images/uploads.ts';

export const PUT = endpoint(async (context, runtime) => {
  const { request } = context;
  await receiveUpload(runtime, {
    token: param(context, 'token'),
    expires: context.url.searchParams.get('expires'),
    sig: context.url.searchParams.get('sig'),
    mediaType: (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase(),
    declaredBytes: declaredLength(request),
    body: request.body ? Readable.from(limitBody(request, MAX_IMAGE_BYTES, () => bodyTooLarge(IMAGE_TOO_LARGE))) : null,
  });
  return noContent();
});

export const ALL = allowMethods({ PUT });
