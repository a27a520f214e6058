/**
 * The account page's billing section (issue 48): the plans with their prices and a subscribe button for
 * each, or the member's subscription (status, renews or ends on, Manage billing); errors as toasts.
 * Placed in /account as `<BillingPanel client:load member={member} />`.
 */
import { useEffect, useId, useRef, useSyncExternalStore } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiRequestError, serverMessageOf } from '../../lib/api-client.ts';
import { withQueryClient } from '../../lib/query-client.tsx';
import { formatMoney } from '../../lib/money.ts';
import type { PublicPlans } from '../../schemas/billing.ts';
import type { BillingInterval, PublicMember } from '../../schemas/member.ts';
import { toast } from '../toast/toast-store.ts';
import { goToCheckout, goToPortal } from './billing-actions.ts';
import { CURRENT_MEMBER_KEY, useCurrentMember } from './use-current-member.ts';

/** Back from Checkout before Stripe's webhook arrived: the member is asked for again this often, this many times. */
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

function cameBackFromCheckout(): boolean {
  return new URLSearchParams(window.location.search).get('checkout') === 'success';
}

/** The query string does not change under the page: nothing to listen to. */
function subscribeToNothing(): () => void {
  return () => {};
}

/** The subscription line: what it costs and what happens next. */
function describeSubscription(subscription: NonNullable<PublicMember['subscription']>): string {
  const price = `${formatMoney(subscription.amount, subscription.currency)} a ${subscription.interval}`;
  if (subscription.cancelAtPeriodEnd) return `${price}. Ends on ${formatDate(subscription.currentPeriodEnd)}; you keep reading until then.`;
  if (subscription.status === 'past_due') return `${price}. Your last payment did not go through: update your card to keep reading.`;
  return `${price}. Renews on ${formatDate(subscription.currentPeriodEnd)}.`;
}

function BillingPanel({ member: initial }: { member?: PublicMember }) {
  const headingId = useId();
  const queryClient = useQueryClient();
  const member = useCurrentMember(initial).data ?? initial;
  const plans = useQuery<PublicPlans>({ queryKey: ['/api/members/plans'] });
  const polls = useRef(0);
  // False in the server's render and while hydrating (it knows no query string), then the browser's answer.
  const cameBack = useSyncExternalStore(subscribeToNothing, cameBackFromCheckout, () => false);
  const waiting = cameBack && member !== undefined && member.level !== 'paid';

  useEffect(() => {
    if (cameBack) toast({ title: 'Thank you!', description: 'Your payment went through; your subscription shows here in a moment.' });
  }, [cameBack]);
  useEffect(() => {
    if (!waiting || polls.current >= CONFIRM_POLL_LIMIT) return;
    const timer = setTimeout(() => {
      polls.current += 1;
      void queryClient.invalidateQueries({ queryKey: CURRENT_MEMBER_KEY });
    }, CONFIRM_POLL_MS);
    return () => clearTimeout(timer);
  });

  const failed = (title: string) => (error: unknown) =>
    toast({ title, description: serverMessageOf(error, 'Please try again later.'), variant: 'destructive' });
  const checkout = useMutation({
    mutationFn: (interval: BillingInterval) => goToCheckout(interval),
    onError: failed('Could not start the payment'),
  });
  const portal = useMutation({ mutationFn: () => goToPortal(), onError: failed('Could not open billing') });
  const busy = checkout.isPending || portal.isPending;

  if (!member) return null;
  const subscription = member.subscription;
  const live = subscription !== undefined && subscription.status !== 'canceled' && subscription.status !== 'incomplete_expired';
  const offer = plans.data;
  // No plans set yet (404): nothing to offer, which is no error for the reader.
  const noPlans = plans.error instanceof ApiRequestError && plans.error.status === 404;

  return (
    <section className="account-section billing-panel" aria-labelledby={headingId} data-testid="billing-panel">
      <h2 id={headingId}>Subscription</h2>
      {member.status === 'comped' && <p>You have complimentary paid access from the newsroom.</p>}
      {live ? (
        <>
          <p data-testid="billing-status">
            <strong>{STATUS_LABELS[subscription.status] ?? subscription.status}</strong>: {describeSubscription(subscription)}
          </p>
          <div className="account-actions">
            <button type="button" className="btn btn-primary" onClick={() => portal.mutate()} disabled={busy}>
              {portal.isPending ? 'Opening…' : 'Manage billing'}
            </button>
          </div>
        </>
      ) : plans.isError && !noPlans ? (
        <p role="alert">The plans could not be loaded. {serverMessageOf(plans.error, 'Please reload the page.')}</p>
      ) : offer?.available ? (
        <>
          <p>{subscription ? 'Your subscription has ended. ' : ''}Subscribe to read every story and support our journalism.</p>
          <div className="account-actions">
            <button type="button" className="btn btn-primary" onClick={() => checkout.mutate('month')} disabled={busy}>
              Subscribe monthly: {formatMoney(offer.monthly, offer.currency)} a month
            </button>
            <button type="button" className="btn" onClick={() => checkout.mutate('year')} disabled={busy}>
              Subscribe yearly: {formatMoney(offer.yearly, offer.currency)} a year
            </button>
            {subscription && (
              <button type="button" className="btn btn-ghost" onClick={() => portal.mutate()} disabled={busy}>
                Past invoices
              </button>
            )}
          </div>
        </>
      ) : (
        (offer || noPlans) && member.status !== 'comped' && <p data-testid="billing-status">Paid subscriptions are not available yet.</p>
      )}
      {waiting && (
        <p className="member-status" role="status">
          Confirming your payment with Stripe…
        </p>
      )}
    </section>
  );
}

export default withQueryClient(BillingPanel);
