/** The account page's profile (issue 48): name, e-mail, the newsletter choice, the data export and signing out. */
import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { apiRequest, api, serverMessageOf } from '../../lib/api-client.ts';
import { withQueryClient } from '../../lib/query-client.tsx';
import type { PublicMember } from '../../schemas/member.ts';
import { toast } from '../toast/toast-store.ts';
import { queueToastForNextPage } from '../toast/flash-toast.ts';
import { CURRENT_MEMBER_KEY, useCurrentMember } from './use-current-member.ts';

function AccountProfile({ member: initial }: { member: PublicMember }) {
  const queryClient = useQueryClient();
  const member = useCurrentMember(initial).data ?? initial;
  const [name, setName] = useState(member.name);
  const [newsletter, setNewsletter] = useState(member.newsletter);
  const save = useMutation({
    mutationFn: (change: { name: string; newsletter: boolean }) =>
      apiRequest<{ member: PublicMember }>('PATCH', '/api/members/me', { body: change }),
    onSuccess: ({ member: saved }) => {
      queryClient.setQueryData(CURRENT_MEMBER_KEY, saved);
      setName(saved.name);
      setNewsletter(saved.newsletter);
      toast({ title: 'Profile saved' });
    },
    onError: (error) =>
      toast({ title: 'Could not save', description: serverMessageOf(error, 'Please try again later.'), variant: 'destructive' }),
  });
  const signOut = useMutation({
    mutationFn: () => api.post('/api/members/sign-out'),
    onSuccess: () => {
      queryClient.setQueryData(CURRENT_MEMBER_KEY, null);
      queueToastForNextPage({ title: 'Signed out' });
      window.location.assign('/');
    },
    onError: () => toast({ title: 'Sign-out failed', description: 'Please try again.', variant: 'destructive' }),
  });

  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    save.mutate({ name: name.trim(), newsletter });
  };
  const busy = save.isPending || signOut.isPending;

  return (
    <div className="account-profile" data-testid="account-profile">
      <form className="member-form" onSubmit={onSubmit} noValidate aria-label="Your profile">
        <dl className="account-email">
          <dt>Email</dt>
          <dd data-testid="account-email">{member.email}</dd>
        </dl>
        <div className="field">
          <label htmlFor="account-name">
            Name <span className="hint">(shown with your comments)</span>
          </label>
          <input
            id="account-name"
            className="input"
            name="name"
            autoComplete="name"
            maxLength={100}
            value={name}
            onChange={(event) => setName(event.target.value)}
            disabled={busy}
          />
        </div>
        <label className="member-check">
          <input
            type="checkbox"
            name="newsletter"
            checked={newsletter}
            onChange={(event) => setNewsletter(event.target.checked)}
            disabled={busy}
          />{' '}
          Send me the morning briefing
        </label>
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {save.isPending ? 'Saving…' : 'Save changes'}
        </button>
      </form>
      <div className="account-actions">
        <a className="btn" href="/api/members/me/export" download data-testid="account-export">
          Export my data
        </a>
        <button type="button" className="btn btn-ghost" onClick={() => signOut.mutate()} disabled={busy}>
          Sign out
        </button>
      </div>
    </div>
  );
}

export default withQueryClient(AccountProfile);
