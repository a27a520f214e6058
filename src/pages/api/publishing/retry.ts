/** POST /api/publishing/retry ({ id } or { all: true }; admins, editors): a failed render runs now; 404 unknown job, 409 not failing. */
import { allowMethods, authorizedEndpoint, json, parseJsonBody } from '../../../api/http.ts';
import { publishingRetrySchema } from '../../../schemas/publishing.ts';
import { retryFailedJobs } from '../../../server/publishing/publishing-status.ts';

export const POST = authorizedEndpoint('publishing.manage', async (context, runtime) =>
  json(await retryFailedJobs(runtime, await parseJsonBody(context.request, publishingRetrySchema))),
);

export const ALL = allowMethods({ POST });
