/**
 * Paid memberships through Stripe (issue 48): the plans and their Stripe prices, and Checkout and the
 * Customer Portal for the member. The webhooks that keep a member's subscription as Stripe has it are in
 * stripe-events.ts.
 */
import type Stripe from 'stripe';
import type { Runtime } from '../runtime.ts';
import {
  memberStatus,
  type BillingInterval,
  type Member,
  type MembershipPlans,
  type membershipPlansInputSchema,
} from '../../schemas/member.ts';
import type { CheckoutInput, PublicPlans } from '../../schemas/billing.ts';
import type { z } from 'zod';
import { AppError, conflict, notFound } from '../errors.ts';
import { nowIso, nowMs } from '../clock.ts';
import { RATE_LIMITS, consumeRateLimit } from '../rate-limit.ts';
import { isKnownCurrency } from '../../lib/money.ts';
import { siteUrl } from '../mail/templates.ts';
import { callStripe, requireStripe, useStripe, type StripeConnection } from './stripe-client.ts';

/** The meta key the plans are stored under (src/schemas/member.ts: MembershipPlans). */
export const PLANS_KEY = 'members.plans';

// ---------------------------------------------------------------------------------------------
// Plans

export function readPlans(runtime: Runtime): Promise<MembershipPlans | undefined> {
  return runtime.store.meta.get<MembershipPlans>(PLANS_KEY);
}

/** The plans as readers see them (404 while none are set); `available` only with Stripe connected and prices made for them. */
export async function getPublicPlans(runtime: Runtime): Promise<PublicPlans> {
  const plans = await readPlans(runtime);
  if (!plans) throw notFound('Membership plans');
  const { currency, monthly, yearly } = plans;
  return { currency, monthly, yearly, available: useStripe(runtime) !== undefined && plans.stripe !== undefined };
}

/**
 * Saves the plans. With Stripe connected, the product is made once and a Price for each amount that
 * changed (Stripe's Prices are immutable; members already paying keep theirs until they change plan).
 */
export async function savePlans(runtime: Runtime, input: z.output<typeof membershipPlansInputSchema>): Promise<MembershipPlans> {
  if (!isKnownCurrency(input.currency)) {
    const message = 'Not a currency code: use a three-letter ISO 4217 code, such as usd or eur';
    throw new AppError(400, `Invalid body: currency: ${message}`, { issues: [{ path: ['currency'], message }] });
  }
  const before = await readPlans(runtime);
  const stripe = useStripe(runtime);
  const unchanged = (interval: BillingInterval) =>
    before?.stripe !== undefined &&
    before.currency === input.currency &&
    (interval === 'month' ? before.monthly === input.monthly : before.yearly === input.yearly);
  let ids: MembershipPlans['stripe'];
  if (stripe) {
    const productId =
      before?.stripe?.productId ??
      (
        await callStripe('create the membership product', () =>
          stripe.api.products.create({ name: `${runtime.config.SITE_NAME} membership`, metadata: { site: runtime.config.SITE_URL } }),
        )
      ).id;
    const priceFor = async (interval: BillingInterval, amount: number): Promise<string> => {
      const kept = before?.stripe && before.stripe.productId === productId && unchanged(interval);
      if (kept) return interval === 'month' ? before.stripe!.monthlyPriceId : before.stripe!.yearlyPriceId;
      const price = await callStripe('create a price', () =>
        stripe.api.prices.create({
          product: productId,
          currency: input.currency,
          unit_amount: amount,
          recurring: { interval },
          nickname: interval === 'month' ? 'Monthly' : 'Yearly',
        }),
      );
      return price.id;
    };
    ids = { productId, monthlyPriceId: await priceFor('month', input.monthly), yearlyPriceId: await priceFor('year', input.yearly) };
  } else if (unchanged('month') && unchanged('year')) {
    // Stripe switched off for now: the prices made for these amounts stay valid for when it is back.
    ids = before?.stripe;
  }
  const plans: MembershipPlans = { ...input, ...(ids && { stripe: ids }), updatedAt: nowIso() };
  await runtime.store.meta.set(PLANS_KEY, plans);
  runtime.log.info({ currency: plans.currency, stripe: ids !== undefined }, '[billing] membership plans saved');
  return plans;
}

// ---------------------------------------------------------------------------------------------
// Checkout and the Customer Portal

/** A path on this site as an absolute URL with a query parameter added (Stripe sends the browser back there). */
function returnUrl(runtime: Runtime, pathname: string, params: Record<string, string> = {}): string {
  const url = new URL(siteUrl(runtime.config, pathname));
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return url.href;
}

/**
 * The member's Stripe customer: made on their first checkout (once, even for two clicks at once) and
 * kept on the member; made again when Stripe no longer knows the kept one (`lost`).
 */
async function ensureCustomer(runtime: Runtime, stripe: StripeConnection, member: Member, lost?: string): Promise<string> {
  if (member.stripeCustomerId && member.stripeCustomerId !== lost) return member.stripeCustomerId;
  const customer = await callStripe('create a customer', () =>
    stripe.api.customers.create(
      { email: member.email, ...(member.name && { name: member.name }), metadata: { member_id: member.id } },
      // Two checkouts started together make one customer: Stripe answers the same one to the same key for 24 hours.
      { idempotencyKey: `member-customer-${member.id}${lost ? `-after-${lost}` : ''}` },
    ),
  );
  const stored = await runtime.store.members.mutate(member.id, (m) =>
    m.stripeCustomerId && m.stripeCustomerId !== lost ? undefined : { ...m, stripeCustomerId: customer.id },
  );
  if (!stored) throw new AppError(404, 'Member not found');
  return stored.stripeCustomerId ?? customer.id;
}

/** Whether Stripe refused a call because the customer it names does not exist (deleted, or kept from other keys). */
function isMissingCustomer(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown; param?: unknown } }).cause;
  return cause?.code === 'resource_missing' && cause.param === 'customer';
}

/** Starts a Stripe Checkout for a plan and answers the URL of Stripe's payment page. */
export async function startCheckout(runtime: Runtime, member: Member, input: CheckoutInput): Promise<{ url: string }> {
  const stripe = requireStripe(runtime);
  // Each attempt makes objects at Stripe: a script clicking Subscribe in a loop is stopped here.
  await consumeRateLimit(runtime, RATE_LIMITS.billing, member.id);
  const plans = await readPlans(runtime);
  if (!plans) throw conflict('Paid subscriptions are not set up: the newsroom has not set the plans yet.');
  if (!plans.stripe)
    throw conflict('Paid subscriptions are not set up: the plans were saved before Stripe was connected; save them again in the admin.');
  const status = memberStatus(member, nowMs());
  if (status === 'paid' || status === 'past-due') {
    throw conflict('You already have a paid subscription: manage it from your account page.');
  }
  const price = input.interval === 'month' ? plans.stripe.monthlyPriceId : plans.stripe.yearlyPriceId;
  const next = input.next ?? '/account';
  const createSession = (customer: string) =>
    callStripe('start a checkout', () =>
      stripe.api.checkout.sessions.create({
        mode: 'subscription',
        customer,
        client_reference_id: member.id,
        line_items: [{ price, quantity: 1 }],
        metadata: { member_id: member.id },
        subscription_data: { metadata: { member_id: member.id } },
        success_url: returnUrl(runtime, next, { checkout: 'success' }),
        cancel_url: returnUrl(runtime, next, { checkout: 'cancelled' }),
      }),
    );
  const customer = await ensureCustomer(runtime, stripe, member);
  let session: Stripe.Checkout.Session;
  try {
    session = await createSession(customer);
  } catch (error) {
    if (!isMissingCustomer(error)) throw error;
    // Deleted in Stripe's dashboard, or the site moved from test keys to live ones: a customer of these keys.
    runtime.log.warn({ member: member.id }, '[billing] the kept Stripe customer is unknown to Stripe; a new one is made');
    session = await createSession(await ensureCustomer(runtime, stripe, { ...member, stripeCustomerId: customer }, customer));
  }
  if (!session.url) throw new AppError(502, 'Stripe answered a checkout without a payment page.');
  runtime.log.info({ member: member.id, interval: input.interval }, '[billing] checkout started');
  return { url: session.url };
}

/** Opens Stripe's Customer Portal for the member (card, plan, cancel) and answers its URL. */
export async function openPortal(runtime: Runtime, member: Member): Promise<{ url: string }> {
  const stripe = requireStripe(runtime);
  await consumeRateLimit(runtime, RATE_LIMITS.billing, member.id);
  if (!member.stripeCustomerId) throw conflict('You have no billing account yet: subscribe first.');
  const customer = member.stripeCustomerId;
  try {
    const session = await callStripe('open the billing portal', () =>
      stripe.api.billingPortal.sessions.create({ customer, return_url: returnUrl(runtime, '/account') }),
    );
    return { url: session.url };
  } catch (error) {
    if (isMissingCustomer(error)) throw conflict('Stripe has no billing account of yours with this site any more: subscribe again.');
    throw error;
  }
}
