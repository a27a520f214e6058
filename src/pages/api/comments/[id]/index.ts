/** DELETE /api/comments/{id}: an admin or editor removes a comment (204). */
import { actorOf, authorizedEndpoint, allowMethods, noContent, param } from '../../../../api/http.ts';
import { deleteComment } from '../../../../server/comments.ts';

export const DELETE = authorizedEndpoint('comment.moderate', async (context, runtime, user) => {
  await deleteComment(runtime, param(context, 'id'), actorOf(user));
  return noContent();
});

export const ALL = allowMethods({ DELETE });
