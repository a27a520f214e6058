/** The Stripe API client of a running application: made from the config once per runtime and kept on it; absent without Stripe. */
import Stripe from 'stripe';
import type { Config } from '../../config.ts';
import type { Runtime } from '../runtime.ts';

/** What the billing code needs of Stripe: the API client and the secret webhooks are signed with. */
export type StripeConnection = NonNullable<Runtime['stripe']>;

/** Stripe's answers within the API's budget (docs/reliability.md: no answer later than 10 s). */
const STRIPE_TIMEOUT_MS = 8000;

/** Whether paid subscriptions can work: a secret key to call Stripe and a webhook secret to believe what it sends. */
export function isStripeConfigured(config: Config): boolean {
  return config.STRIPE_SECRET_KEY !== undefined && config.STRIPE_WEBHOOK_SECRET !== undefined;
}

/** A client for the key; STRIPE_API_URL points it at a local stand-in of Stripe (tests), never set in production. */
export function createStripeConnection(config: Config): StripeConnection | undefined {
  if (!config.STRIPE_SECRET_KEY || !config.STRIPE_WEBHOOK_SECRET) return undefined;
  const target = config.STRIPE_API_URL ? new URL(config.STRIPE_API_URL) : undefined;
  const api = new Stripe(config.STRIPE_SECRET_KEY, {
    timeout: STRIPE_TIMEOUT_MS,
    // Stripe's own advice: retried requests carry an idempotency key, so a retry never charges twice.
    maxNetworkRetries: 2,
    // The account's settings are no business of a telemetry header.
    telemetry: false,
    appInfo: { name: 'Meridian News' },
    ...(target && {
      host: target.hostname,
      port: target.port || (target.protocol === 'https:' ? 443 : 80),
      protocol: target.protocol === 'https:' ? 'https' : 'http',
    }),
  });
  return { api, webhookSecret: config.STRIPE_WEBHOOK_SECRET };
}

/** The runtime's Stripe connection, made on first use (like the mailer); undefined when Stripe is not configured. */
export function useStripe(runtime: Runtime): StripeConnection | undefined {
  if (runtime.stripe === undefined) runtime.stripe = createStripeConnection(runtime.config) ?? null;
  return runtime.stripe ?? undefined;
}
