/** POST /api/articles/{id}/like: records this visitor's like (one vote per browser, idempotent), rate limited per IP. */
import { allowMethods } from '../../../../api/http.ts';
import { voteEndpoint } from '../../../../api/votes.ts';

export const POST = voteEndpoint('like');

export const ALL = allowMethods({ POST });
