/** POST /api/articles/{id}/like: records this visitor's like (one vote per browser, idempotent), rate limited per IP. */
import { allowMethods, clientIp, endpoint, expectEmptyBody, json, param } from '../../../../api/http.ts';
import { ensureVisitorId } from '../../../../api/cookies.ts';
import { voteOnArticle } from '../../../../server/articles.ts';
import { RATE_LIMITS, consumeRateLimit } from '../../../../server/rate-limit.ts';

export const POST = endpoint(async (context, runtime) => {
  await consumeRateLimit(runtime, RATE_LIMITS.vote, clientIp(context, runtime));
  await expectEmptyBody(context.request);
  const visitorId = ensureVisitorId(context.cookies, runtime.config);
  return json(await voteOnArticle(runtime, param(context, 'id'), visitorId, 'like'));
});

export const ALL = allowMethods({ POST });
