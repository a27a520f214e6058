/**
 * GET /api/articles/{id}/comments (newest first; readers see visible ones without e-mail) and POST (201, rate limited, honeypot);
 * a signed-in member's comment carries their name, and with members-only comments nobody else may post (401).
 */
import { allowMethods, clientIp, endpoint, json, param, parseJsonBody, commentViewerOf } from '../../../../api/http.ts';
import { commentInputSchema, memberCommentInputSchema } from '../../../../schemas/comment.ts';
import { addComment, addMemberComment, assertMayCommentAnonymously, listArticleComments } from '../../../../server/comments.ts';
import { RATE_LIMITS, consumeRateLimit } from '../../../../server/rate-limit.ts';

export const GET = endpoint(async (context, runtime) =>
  json(await listArticleComments(runtime, param(context, 'id'), commentViewerOf(context))),
);

export const POST = endpoint(async (context, runtime) => {
  // Counted before parsing: a script posting junk uses up its window as fast as one posting comments.
  await consumeRateLimit(runtime, RATE_LIMITS.comment, clientIp(context, runtime));
  const member = context.locals.member;
  if (member) {
    const input = await parseJsonBody(context.request, memberCommentInputSchema);
    return json(await addMemberComment(runtime, param(context, 'id'), member, input), 201);
  }
  await assertMayCommentAnonymously(runtime);
  const input = await parseJsonBody(context.request, commentInputSchema);
  return json(await addComment(runtime, param(context, 'id'), input), 201);
});

export const ALL = allowMethods({ GET, POST });
