/** What the signed-in user's role may do, for islands hiding what it cannot: the server's own check over GET /api/auth/me's grants. */
import type { Grant } from '../../schemas/auth.ts';
import { isAllowed, type Action, type ArticleTarget } from '../../lib/permissions.ts';
import { useCurrentUser } from './use-current-user.ts';

export type CanCheck = (action: Action, target?: ArticleTarget) => boolean;

/** `can` answers false until the user is known, so nothing a role may lack flashes in and out. */
export function usePermissions(): { can: CanCheck; userId: string | undefined; role: string | undefined; ready: boolean } {
  const { data: user } = useCurrentUser();
  const grants = (user?.permissions ?? {}) as Partial<Record<Action, Grant>>;
  return {
    can: (action, target) => (user ? isAllowed(grants, user.id, action, target) : false),
    userId: user?.id,
    role: user?.role,
    ready: user !== undefined && user !== null,
  };
}
