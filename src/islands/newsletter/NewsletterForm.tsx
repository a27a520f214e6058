/**
 * Footer newsletter sign-up: checks the address, posts it, reports the outcome with a toast and asks the reader to confirm from their
 * inbox.
 */
import { useState, type FormEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import { api, serverMessageOf } from '../../lib/api-client.ts';
import { withQueryClient } from '../../lib/query-client.tsx';
import { toast } from '../toast/toast-store.ts';

function NewsletterForm() {
  const [email, setEmail] = useState('');
  const [sentTo, setSentTo] = useState<string | undefined>();
  const subscribe = useMutation({
    mutationFn: (address: string) => api.post('/api/newsletter/subscribe', { email: address }),
    onSuccess: (_result, address) => {
      setEmail('');
      setSentTo(address);
      toast({ title: 'Success!', description: "You've been subscribed to our newsletter." });
    },
    onError: (error) =>
      toast({ title: 'Subscription failed', description: serverMessageOf(error, 'Please try again later.'), variant: 'destructive' }),
  });

  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    // docs/product.md, Interface rules: forms: an address without '@' is refused here and nothing is sent.
    if (!email.includes('@')) {
      toast({ title: 'Invalid email', description: 'Please enter a valid email address.', variant: 'destructive' });
      return;
    }
    setSentTo(undefined);
    subscribe.mutate(email.trim());
  };

  return (
    <form className="newsletter-form" onSubmit={onSubmit} noValidate aria-label="Newsletter sign-up">
      <label htmlFor="newsletter-email" className="visually-hidden">
        Email address
      </label>
      <input
        id="newsletter-email"
        className="input"
        type="email"
        name="email"
        autoComplete="email"
        placeholder="you@example.com"
        value={email}
        onChange={(event) => setEmail(event.target.value)}
        disabled={subscribe.isPending}
      />
      <button type="submit" className="btn btn-primary" disabled={subscribe.isPending}>
        {subscribe.isPending ? 'Subscribing…' : 'Subscribe'}
      </button>
      <p className="newsletter-note" role="status" data-testid="newsletter-check-inbox">
        {sentTo ? `Check your inbox: we sent a link to ${sentTo} to confirm your subscription.` : ''}
      </p>
    </form>
  );
}

export default withQueryClient(NewsletterForm);
