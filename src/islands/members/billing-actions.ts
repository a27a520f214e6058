/** What the billing islands do on a click: ask the API for Stripe's page (Checkout or the Portal) and send the browser there. */
import { api } from '../../lib/api-client.ts';
import type { RedirectAnswer } from '../../schemas/billing.ts';
import type { BillingInterval } from '../../schemas/member.ts';

/** Starts a Stripe Checkout for a plan and leaves for its payment page. */
export async function goToCheckout(interval: BillingInterval, next?: string): Promise<void> {
  const { url } = await api.post<RedirectAnswer>('/api/members/checkout', { interval, ...(next && { next }) });
  window.location.assign(url);
}

/** Opens Stripe's Customer Portal (card, plan, cancel) and leaves for it. */
export async function goToPortal(): Promise<void> {
  const { url } = await api.post<RedirectAnswer>('/api/members/portal');
  window.location.assign(url);
}

/** The path a reader is on, to come back to after paying. */
export function currentPath(): string {
  return `${window.location.pathname}${window.location.search}`;
}
