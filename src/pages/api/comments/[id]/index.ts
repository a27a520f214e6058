/** DELETE /api/comments/{id}: an admin removes a comment (204). */
import { adminEndpoint, allowMethods, noContent, param } from '../../../../api/http.ts';
import { deleteComment } from '../../../../server/comments.ts';

export const DELETE = adminEndpoint(async (context, runtime) => {
  await deleteComment(runtime, param(context, 'id'));
  return noContent();
});

export const ALL = allowMethods({ DELETE });
