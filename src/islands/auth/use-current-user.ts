/** The signed-in user as every island sees it: one shared query of GET /api/auth/me, null when signed out. */
import { useQuery } from '@tanstack/react-query';
import { api } from '../../lib/api-client.ts';
import { hasSignedInHint } from '../../lib/signed-in-hint.ts';
import type { PublicUser } from '../../schemas/auth.ts';

export const CURRENT_USER_KEY = ['/api/auth/me'] as const;

/** `initial`: the user an on-demand page already knows (admin pages), so role-dependent controls render at once. */
export function useCurrentUser(initial?: PublicUser) {
  return useQuery({
    queryKey: CURRENT_USER_KEY,
    ...(initial ? { initialData: initial } : {}),
    queryFn: async ({ signal }) => {
      // No hint, no session: asking would only log a 401 in every signed-out reader's console.
      if (!hasSignedInHint()) return null;
      const answer = await api.get<{ user: PublicUser } | null>('/api/auth/me', { on401: 'returnNull', signal });
      return answer?.user ?? null;
    },
  });
}
