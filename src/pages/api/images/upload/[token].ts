/**
 * PUT /api/images/upload/{token}?expires=...&sig=...: receives the raw image. No session: the
 * signature is the authority (the origin check of the middleware still applies).
 */
import { allowMethods, endpoint, noContent, param } from '../../../../api/http.ts';
import { receiveUpload } from '../../../../server/images/uploads.ts';

export const PUT = endpoint(async (context, runtime) => {
  await receiveUpload(runtime, {
    token: param(context, 'token'),
    expires: context.url.searchParams.get('expires'),
    sig: context.url.searchParams.get('sig'),
    contentType: context.request.headers.get('content-type'),
    contentLength: context.request.headers.get('content-length'),
    body: context.request.body,
  });
  return noContent();
});

export const ALL = allowMethods({ PUT });
