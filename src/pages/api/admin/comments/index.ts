/** GET /api/admin/comments: every comment (with e-mail and status), newest first, searchable and paged. */
import { authorizedEndpoint, allowMethods, json, parseQuery } from '../../../../api/http.ts';
import { commentListQuerySchema } from '../../../../schemas/comment.ts';
import { listComments } from '../../../../server/comments.ts';

export const GET = authorizedEndpoint('comment.moderate', async (context, runtime) =>
  json(await listComments(runtime, parseQuery(context.url, commentListQuerySchema))),
);

export const ALL = allowMethods({ GET });
