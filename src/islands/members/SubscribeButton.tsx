/**
 * One subscribe button (issue 48) for the paywall box: a signed-in member goes to Stripe's Checkout for
 * the plan and comes back to this story; a reader who is signed out goes to sign in first.
 */
import { useMutation } from '@tanstack/react-query';
import { ApiRequestError, serverMessageOf } from '../../lib/api-client.ts';
import { withQueryClient } from '../../lib/query-client.tsx';
import type { BillingInterval } from '../../schemas/member.ts';
import { toast } from '../toast/toast-store.ts';
import { currentPath, goToCheckout } from './billing-actions.ts';

type Props = {
  interval?: BillingInterval;
  label?: string;
  /** Where to come back to after paying; the page the button is on by default. */
  next?: string;
};

function SubscribeButton({ interval = 'month', label = 'Subscribe', next }: Props) {
  const checkout = useMutation({
    mutationFn: () => goToCheckout(interval, next ?? currentPath()),
    onError: (error) => {
      if (error instanceof ApiRequestError && error.status === 401) {
        window.location.assign(`/account/sign-in?next=${encodeURIComponent(next ?? currentPath())}`);
        return;
      }
      toast({
        title: 'Could not start the payment',
        description: serverMessageOf(error, 'Please try again later.'),
        variant: 'destructive',
      });
    },
  });
  return (
    <button
      type="button"
      className="btn btn-primary"
      onClick={() => checkout.mutate()}
      disabled={checkout.isPending}
      data-testid="subscribe-button"
    >
      {checkout.isPending ? 'Opening checkout…' : label}
    </button>
  );
}

export default withQueryClient(SubscribeButton);
