/** The Stripe API client of a running application: made from the config once per runtime and kept on it; absent without Stripe. */
import Stripe from 'stripe';
import type { Config } from '../../config.ts';
import type { Runtime } from '../runtime.ts';
import { AppError, ServiceUnavailableError, conflict } from '../errors.ts';

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

/** The connection, or a 409 that says what is missing. */
export function requireStripe(runtime: Runtime): StripeConnection {
  const stripe = useStripe(runtime);
  if (!stripe) throw conflict('Paid subscriptions are not set up: this site is not connected to Stripe.');
  return stripe;
}

/**
 * Calls Stripe, its failures as the API answers them: unreachable or overloaded is a 503 to try again,
 * a refusal a 502 naming its code (never Stripe's message, which may quote an e-mail address).
 */
export async function callStripe<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const type = (error as { type?: unknown }).type;
    if (type === 'StripeConnectionError' || type === 'StripeAPIError' || type === 'StripeRateLimitError') {
      throw new ServiceUnavailableError('Stripe did not answer; please try again in a minute.', { retryAfterS: 30, cause: error });
    }
    if (type === 'StripeAuthenticationError' || type === 'StripePermissionError') {
      throw new AppError(502, 'Stripe refused the API key of this site: check STRIPE_SECRET_KEY.', { cause: error });
    }
    if (typeof type === 'string' && type.startsWith('Stripe')) {
      const code = (error as { code?: unknown }).code;
      throw new AppError(502, `Stripe refused to ${what} (${typeof code === 'string' ? code : 'invalid request'}).`, { cause: error });
    }
    throw error;
  }
}
