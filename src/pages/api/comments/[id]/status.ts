/** PUT /api/comments/{id}/status: an admin or editor hides or shows a comment. */
import { actorOf, authorizedEndpoint, allowMethods, json, param, parseJsonBody } from '../../../../api/http.ts';
import { commentStatusUpdateSchema } from '../../../../schemas/comment.ts';
import { setCommentStatus } from '../../../../server/comments.ts';

export const PUT = authorizedEndpoint('comment.moderate', async (context, runtime, user) => {
  const { status } = await parseJsonBody(context.request, commentStatusUpdateSchema);
  return json(await setCommentStatus(runtime, param(context, 'id'), status, actorOf(user)));
});

export const ALL = allowMethods({ PUT });
