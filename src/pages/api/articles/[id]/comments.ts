/** GET /api/articles/{id}/comments (newest first; readers see visible ones without e-mail) and POST (201, rate limited, honeypot). */
import { allowMethods, clientIp, endpoint, json, param, parseJsonBody, commentViewerOf } from '../../../../api/http.ts';
import { commentInputSchema } from '../../../../schemas/comment.ts';
import { addComment, listArticleComments } from '../../../../server/comments.ts';
import { RATE_LIMITS, consumeRateLimit } from '../../../../server/rate-limit.ts';

export const GET = endpoint(async (context, runtime) =>
  json(await listArticleComments(runtime, param(context, 'id'), commentViewerOf(context))),
);

export const POST = endpoint(async (context, runtime) => {
  // Counted before parsing: a script posting junk uses up its window as fast as one posting comments.
  await consumeRateLimit(runtime, RATE_LIMITS.comment, clientIp(context, runtime));
  const input = await parseJsonBody(context.request, commentInputSchema);
  return json(await addComment(runtime, param(context, 'id'), input), 201);
});

export const ALL = allowMethods({ GET, POST });
