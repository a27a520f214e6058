/** Header account links: Login for everyone in the static HTML; Admin and Logout once GET /api/auth/me says a user is signed in. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../lib/api-client.ts';
import { withQueryClient } from '../../lib/query-client.tsx';
import { toast } from '../toast/toast-store.ts';
import { queueToastForNextPage } from '../toast/flash-toast.ts';
import { CURRENT_USER_KEY, useCurrentUser } from './use-current-user.ts';

function AuthNav() {
  const queryClient = useQueryClient();
  const { data: user } = useCurrentUser();
  const logout = useMutation({
    mutationFn: () => api.post('/api/auth/logout'),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: CURRENT_USER_KEY });
      toast({ title: 'Logged out' });
      // The navigation replaces this page: the next page's Toaster shows the toast again.
      queueToastForNextPage({ title: 'Logged out' });
      window.location.assign('/');
    },
    onError: () => toast({ title: 'Logout failed', description: 'Failed to log out. Please try again.', variant: 'destructive' }),
  });

  if (!user) {
    return (
      <a className="btn btn-sm header-login" href="/login">
        Login
      </a>
    );
  }
  return (
    <span className="auth-nav">
      <a className="btn btn-sm" href="/admin">
        Admin
      </a>
      <button type="button" className="btn btn-sm btn-ghost" onClick={() => logout.mutate()} disabled={logout.isPending}>
        Logout
      </button>
    </span>
  );
}

export default withQueryClient(AuthNav);
