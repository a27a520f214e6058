/** The like/dislike endpoints and the editors' adjust endpoints, written once for both kinds of vote. */
import type { APIRoute } from 'astro';
import { adjustVotesSchema, type VoteKind } from '../schemas/article.ts';
import { adjustArticleVotes, voteOnArticle } from '../server/articles.ts';
import { RATE_LIMITS, consumeRateLimit } from '../server/rate-limit.ts';
import { ensureVisitorId } from './cookies.ts';
import { authorizedEndpoint, clientIp, endpoint, expectEmptyBody, json, param, parseJsonBody } from './http.ts';

/** POST /api/articles/{id}/like|dislike: this visitor's vote (one per browser, idempotent), rate limited per IP. */
export function voteEndpoint(kind: VoteKind): APIRoute {
  return endpoint(async (context, runtime) => {
    await consumeRateLimit(runtime, RATE_LIMITS.vote, clientIp(context, runtime));
    await expectEmptyBody(context.request);
    const visitorId = ensureVisitorId(context.cookies, runtime.config);
    return json(await voteOnArticle(runtime, param(context, 'id'), visitorId, kind));
  });
}

/** POST /api/admin/articles/{id}/adjust-likes|adjust-dislikes: adds (or, negative, removes) votes by hand, never below zero. */
export function adjustVotesEndpoint(kind: VoteKind): APIRoute {
  return authorizedEndpoint('votes.adjust', async (context, runtime) => {
    const { amount } = await parseJsonBody(context.request, adjustVotesSchema);
    return json(await adjustArticleVotes(runtime, param(context, 'id'), kind, amount));
  });
}
