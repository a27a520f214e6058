/** The signed-in member (issue 48) as islands see it: one shared query of GET /api/members/me, null when signed out. */
import { useQuery } from '@tanstack/react-query';
import { api } from '../../lib/api-client.ts';
import { hasMemberHint } from '../../lib/signed-in-hint.ts';
import type { PublicMember } from '../../schemas/member.ts';

export const CURRENT_MEMBER_KEY = ['/api/members/me'] as const;

/** `initial`: the member an on-demand page already knows (the account page), so it renders at once. */
export function useCurrentMember(initial?: PublicMember) {
  return useQuery({
    queryKey: CURRENT_MEMBER_KEY,
    ...(initial ? { initialData: initial } : {}),
    queryFn: async ({ signal }) => {
      // No hint, no member session: asking would only log a 401 in every signed-out reader's console.
      if (!hasMemberHint()) return null;
      const answer = await api.get<{ member: PublicMember } | null>('/api/members/me', { on401: 'returnNull', signal });
      return answer?.member ?? null;
    },
  });
}
