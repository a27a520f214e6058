/** GET /api/admin/comments/count: the count behind GET /api/admin/comments for the same filters. */
import { authorizedEndpoint, allowMethods, json, parseQuery } from '../../../../api/http.ts';
import { commentListQuerySchema } from '../../../../schemas/comment.ts';
import { countComments } from '../../../../server/comments.ts';

export const GET = authorizedEndpoint('comment.moderate', async (context, runtime) => {
  const query = parseQuery(context.url, commentListQuerySchema);
  return json({ count: await countComments(runtime, query) });
});

export const ALL = allowMethods({ GET });
