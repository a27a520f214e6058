/** POST /api/admin/articles/{id}/adjust-dislikes: adds (or, negative, removes) dislikes by hand, never below zero. */
import { authorizedEndpoint, allowMethods, json, param, parseJsonBody } from '../../../../../api/http.ts';
import { adjustVotesSchema } from '../../../../../schemas/article.ts';
import { adjustArticleVotes } from '../../../../../server/articles.ts';

export const POST = authorizedEndpoint('votes.adjust', async (context, runtime) => {
  const { amount } = await parseJsonBody(context.request, adjustVotesSchema);
  return json(await adjustArticleVotes(runtime, param(context, 'id'), 'dislike', amount));
});

export const ALL = allowMethods({ POST });
