/** The reader's sign-in and sign-up form (issue 48): an address (a name and the newsletter for a new account), then a link by e-mail. */
import { useState, type FormEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import { api, serverMessageOf } from '../../lib/api-client.ts';
import { withQueryClient } from '../../lib/query-client.tsx';
import { toast } from '../toast/toast-store.ts';

type Props = {
  /** Where the link sends the reader back to (a path on this site), when they came from a page. */
  next?: string | undefined;
  /** `expired`: the reader followed a spent or outdated link. */
  error?: 'expired' | undefined;
};

type Draft = { email: string; name: string; newsletter: boolean };

function SignInForm({ next, error }: Props) {
  const [draft, setDraft] = useState<Draft>({ email: '', name: '', newsletter: false });
  const [sentTo, setSentTo] = useState<string | undefined>();
  const send = useMutation({
    mutationFn: (input: Draft) =>
      api.post('/api/members/sign-in', {
        email: input.email.trim(),
        ...(input.name.trim() ? { name: input.name.trim() } : {}),
        newsletter: input.newsletter,
        ...(next ? { next } : {}),
      }),
    onSuccess: (_answer, input) => {
      setSentTo(input.email.trim());
      toast({ title: 'Check your inbox', description: 'We sent you a link to sign in.' });
    },
    onError: (failure) =>
      toast({ title: 'Could not send the link', description: serverMessageOf(failure, 'Please try again later.'), variant: 'destructive' }),
  });

  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (!draft.email.includes('@')) {
      toast({ title: 'Invalid email', description: 'Please enter a valid email address.', variant: 'destructive' });
      return;
    }
    setSentTo(undefined);
    send.mutate(draft);
  };

  return (
    <form className="member-form" onSubmit={onSubmit} noValidate aria-label="Sign in or create an account">
      {error === 'expired' && (
        <p className="member-notice" role="alert" data-testid="sign-in-expired">
          That sign-in link has expired or was already used. Enter your address and we will send you a new one.
        </p>
      )}
      <div className="field">
        <label htmlFor="member-email">Email</label>
        <input
          id="member-email"
          className="input"
          type="email"
          name="email"
          autoComplete="email"
          maxLength={254}
          value={draft.email}
          onChange={(event) => setDraft((d) => ({ ...d, email: event.target.value }))}
          disabled={send.isPending}
        />
      </div>
      <fieldset className="member-new">
        <legend>New here? (optional)</legend>
        <div className="field">
          <label htmlFor="member-name">
            Name <span className="hint">(shown with your comments)</span>
          </label>
          <input
            id="member-name"
            className="input"
            name="name"
            autoComplete="name"
            maxLength={100}
            value={draft.name}
            onChange={(event) => setDraft((d) => ({ ...d, name: event.target.value }))}
            disabled={send.isPending}
          />
        </div>
        <label className="member-check">
          <input
            type="checkbox"
            name="newsletter"
            checked={draft.newsletter}
            onChange={(event) => setDraft((d) => ({ ...d, newsletter: event.target.checked }))}
            disabled={send.isPending}
          />{' '}
          Send me the morning briefing
        </label>
      </fieldset>
      <button type="submit" className="btn btn-primary" disabled={send.isPending}>
        {send.isPending ? 'Sending…' : 'Email me a sign-in link'}
      </button>
      <p className="member-status" role="status" data-testid="sign-in-sent">
        {sentTo ? `Check your inbox: we sent a link to ${sentTo}. It works once, for one hour.` : ''}
      </p>
    </form>
  );
}

export default withQueryClient(SignInForm);
