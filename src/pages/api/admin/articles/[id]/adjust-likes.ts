/** POST /api/admin/articles/{id}/adjust-likes: adds (or, negative, removes) likes by hand, never below zero. */
import { allowMethods } from '../../../../../api/http.ts';
import { adjustVotesEndpoint } from '../../../../../api/votes.ts';

export const POST = adjustVotesEndpoint('like');

export const ALL = allowMethods({ POST });
