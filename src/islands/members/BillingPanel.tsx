/**
 * The account page's billing box (issue 48): the plans with their prices and a subscribe button for
 * each, or the member's subscription (status, renews or ends on, Manage billing); errors as toasts.
 */
import { useEffect } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { ApiRequestError, api, serverMessageOf } from '../../lib/api-client.ts';
import { withQueryClient } from '../../lib/query-client.tsx';
import { formatMoney } from '../../lib/money.ts';
import type { PublicPlans } from '../../schemas/billing.ts';
import type { BillingInterval, PublicMember } from '../../schemas/member.ts';
import { toast } from '../toast/toast-store.ts';
import { goToCheckout, goToPortal } from './billing-actions.ts';

/** How long the page waits for Stripe's webhook after a payment before it stops asking. */
const CONFIRM_POLL_MS = 2000;
const CONFIRM_POLL_LIMIT = 15;

function formatDate(iso: string): string {
  return new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'long', year: 'numeric' }).format(new Date(iso));
}

const STATUS_LABELS: Record<string, string> = {
  active: 'Active',
  trialing: 'Trial',
  past_due: 'Payment failed',
  canceled: 'Ended',
  unpaid: 'Unpaid',
  incomplete: 'Waiting for payment',
  incomplete_expired: 'Expired',
  paused: 'Paused',
};

function justPaid(): boolean {
  return typeof window !== 'undefined' && new URLSearchParams(window.location.search).get('checkout') === 'success';
}

function BillingPanel() {
  const paid = justPaid();
  const me = useQuery<{ member: PublicMember } | null>({
    queryKey: ['/api/members/me'],
    queryFn: ({ signal }) => api.get<{ member: PublicMember } | null>('/api/members/me', { on401: 'returnNull', signal }),
    // Back from Checkout before Stripe's webhook arrived: ask again until the subscription shows.
    refetchInterval: (query) => {
      const member = query.state.data?.member;
      return paid && member?.level !== 'paid' && query.state.dataUpdateCount < CONFIRM_POLL_LIMIT ? CONFIRM_POLL_MS : false;
    },
  });
  const plans = useQuery<PublicPlans>({ queryKey: ['/api/members/plans'] });

  useEffect(() => {
    if (paid) toast({ title: 'Thank you!', description: 'Your payment went through; your subscription shows here in a moment.' });
  }, [paid]);

  const checkout = useMutation({
    mutationFn: (interval: BillingInterval) => goToCheckout(interval),
    onError: (error) =>
      toast({
        title: 'Could not start the payment',
        description: serverMessageOf(error, 'Please try again later.'),
        variant: 'destructive',
      }),
  });
  const portal = useMutation({
    mutationFn: () => goToPortal(),
    onError: (error) =>
      toast({ title: 'Could not open billing', description: serverMessageOf(error, 'Please try again later.'), variant: 'destructive' }),
  });
  const busy = checkout.isPending || portal.isPending;

  if (me.isPending || plans.isPending) return <section className="card billing-panel" aria-busy="true" aria-label="Subscription" />;
  if (me.error || plans.error) {
    const error = me.error ?? plans.error;
    const message = error instanceof ApiRequestError ? serverMessageOf(error, 'Please reload the page.') : 'Please reload the page.';
    return (
      <section className="card billing-panel" aria-labelledby="billing-title">
        <h2 id="billing-title">Subscription</h2>
        <p role="alert">Your subscription could not be loaded. {message}</p>
      </section>
    );
  }
  const member = me.data?.member;
  if (!member) return null;
  const subscription = member.subscription;
  const offer = plans.data;

  return (
    <section className="card billing-panel" aria-labelledby="billing-title" data-testid="billing-panel">
      <h2 id="billing-title">Subscription</h2>
      {member.status === 'comped' && <p data-testid="billing-status">You have complimentary paid access from the newsroom.</p>}
      {subscription && subscription.status !== 'canceled' && subscription.status !== 'incomplete_expired' ? (
        <>
          <p data-testid="billing-status">
            <strong>{STATUS_LABELS[subscription.status] ?? subscription.status}</strong>
            {`: ${formatMoney(subscription.amount, subscription.currency)} a ${subscription.interval}. `}
            {subscription.cancelAtPeriodEnd
              ? `Ends on ${formatDate(subscription.currentPeriodEnd)}; you keep reading until then.`
              : subscription.status === 'past_due'
                ? 'Your last payment did not go through: update your card to keep reading.'
                : `Renews on ${formatDate(subscription.currentPeriodEnd)}.`}
          </p>
          <p>
            <button type="button" className="btn btn-primary" onClick={() => portal.mutate()} disabled={busy}>
              {portal.isPending ? 'Opening…' : 'Manage billing'}
            </button>
          </p>
        </>
      ) : offer?.available ? (
        <>
          <p>Subscribe to read every story, paid-only ones included, and support our journalism.</p>
          <p className="card-actions">
            <button type="button" className="btn btn-primary" onClick={() => checkout.mutate('month')} disabled={busy}>
              {`Subscribe monthly: ${formatMoney(offer.monthly, offer.currency)} a month`}
            </button>{' '}
            <button type="button" className="btn" onClick={() => checkout.mutate('year')} disabled={busy}>
              {`Subscribe yearly: ${formatMoney(offer.yearly, offer.currency)} a year`}
            </button>
          </p>
          {subscription?.status === 'canceled' && <p>Your previous subscription has ended.</p>}
        </>
      ) : (
        member.status !== 'comped' && <p data-testid="billing-status">Paid subscriptions are not available yet.</p>
      )}
      {subscription?.status === 'canceled' && (
        <p>
          <button type="button" className="btn btn-ghost btn-sm" onClick={() => portal.mutate()} disabled={busy}>
            Past invoices
          </button>
        </p>
      )}
    </section>
  );
}

export default withQueryClient(BillingPanel);
