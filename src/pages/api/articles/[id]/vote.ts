/** GET /api/articles/{id}/vote: live like/dislike counts and this visitor's vote, for the article islands. */
import { allowMethods, endpoint, json, param } from '../../../../api/http.ts';
import { readVisitorId } from '../../../../api/cookies.ts';
import { getVoteState } from '../../../../server/articles.ts';

export const GET = endpoint(async (context, runtime) =>
  json(await getVoteState(runtime, param(context, 'id'), readVisitorId(context.cookies))),
);

export const ALL = allowMethods({ GET });
