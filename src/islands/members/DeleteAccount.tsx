/** Deleting one's account (issue 48), after a confirmation that says what goes with it; refused while a paid subscription still renews. */
import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { api, serverMessageOf } from '../../lib/api-client.ts';
import { withQueryClient } from '../../lib/query-client.tsx';
import { toast } from '../toast/toast-store.ts';
import { queueToastForNextPage } from '../toast/flash-toast.ts';

function DeleteAccount() {
  const [confirming, setConfirming] = useState(false);
  const remove = useMutation({
    mutationFn: () => api.delete('/api/members/me'),
    onSuccess: () => {
      queueToastForNextPage({ title: 'Account deleted', description: 'Your account and everything it held are gone.' });
      window.location.assign('/');
    },
    onError: (error) => {
      setConfirming(false);
      toast({
        title: 'Could not delete your account',
        description: serverMessageOf(error, 'Please try again later.'),
        variant: 'destructive',
      });
    },
  });

  if (!confirming) {
    return (
      <button type="button" className="btn btn-danger" onClick={() => setConfirming(true)} data-testid="account-delete">
        Delete my account
      </button>
    );
  }
  return (
    <div className="account-confirm" role="group" aria-labelledby="account-delete-question">
      <p id="account-delete-question">
        Delete your account? Your profile, your comments and your newsletter subscription are deleted with it. This cannot be undone.
      </p>
      <div className="account-actions">
        <button
          type="button"
          className="btn btn-danger"
          onClick={() => remove.mutate()}
          disabled={remove.isPending}
          data-testid="account-delete-confirm"
        >
          {remove.isPending ? 'Deleting…' : 'Yes, delete my account'}
        </button>
        <button type="button" className="btn btn-ghost" onClick={() => setConfirming(false)} disabled={remove.isPending}>
          Cancel
        </button>
      </div>
    </div>
  );
}

export default withQueryClient(DeleteAccount);
