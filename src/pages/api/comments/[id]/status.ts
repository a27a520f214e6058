/** PUT /api/comments/{id}/status: an admin hides or shows a comment. */
import { adminEndpoint, allowMethods, json, param, parseJsonBody } from '../../../../api/http.ts';
import { commentStatusUpdateSchema } from '../../../../schemas/comment.ts';
import { setCommentStatus } from '../../../../server/comments.ts';

export const PUT = adminEndpoint(async (context, runtime) => {
  const { status } = await parseJsonBody(context.request, commentStatusUpdateSchema);
  return json(await setCommentStatus(runtime, param(context, 'id'), status));
});

export const ALL = allowMethods({ PUT });
