/** POST /api/articles/{id}/dislike: records this visitor's dislike (one vote per browser, idempotent), rate limited per IP. */
import { allowMethods } from '../../../../api/http.ts';
import { voteEndpoint } from '../../../../api/votes.ts';

export const POST = voteEndpoint('dislike');

export const ALL = allowMethods({ POST });
