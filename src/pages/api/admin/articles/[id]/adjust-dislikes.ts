/** POST /api/admin/articles/{id}/adjust-dislikes: adds (or, negative, removes) dislikes by hand, never below zero. */
import { allowMethods } from '../../../../../api/http.ts';
import { adjustVotesEndpoint } from '../../../../../api/votes.ts';

export const POST = adjustVotesEndpoint('dislike');

export const ALL = allowMethods({ POST });
