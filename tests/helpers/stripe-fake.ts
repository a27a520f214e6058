/**
 * A local stand-in of Stripe for the tests (issue 48): a real HTTP server on 127.0.0.1 that answers the
 * few API endpoints the site calls in Stripe's wire format (form-encoded requests, JSON answers, the
 * Bearer key checked), serves the hosted Checkout and Customer Portal pages a browser visits, and sends
 * webhooks signed as Stripe signs them. A test clock moves its time: subscriptions renew, fail or end.
 */
import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const FAKE_STRIPE_KEY = 'sk_test_meridianFake000000000000';
export const FAKE_WEBHOOK_SECRET = 'whsec_meridianFakeSigningSecret0000';
/** The API version the fake's events claim (the one stripe@23 speaks). */
const API_VERSION = '2026-11-18.endive';

type Json = Record<string, unknown>;
type Interval = 'month' | 'year';

export type FakeCustomer = {
  id: string;
  object: 'customer';
  email: string | null;
  name: string | null;
  metadata: Record<string, string>;
  created: number;
};
export type FakePrice = {
  id: string;
  object: 'price';
  product: string;
  currency: string;
  unit_amount: number;
  recurring: { interval: Interval; interval_count: 1 };
  nickname: string | null;
  active: boolean;
};
export type FakeSession = {
  id: string;
  object: 'checkout.session';
  mode: string;
  status: 'open' | 'complete';
  customer: string | null;
  client_reference_id: string | null;
  metadata: Record<string, string>;
  subscription: string | null;
  success_url: string;
  cancel_url: string;
  url: string;
  line_items: { price: string; quantity: number }[];
  subscription_metadata: Record<string, string>;
};
export type FakeSubscription = {
  id: string;
  object: 'subscription';
  customer: string;
  status: 'active' | 'past_due' | 'canceled';
  cancel_at_period_end: boolean;
  cancel_at: number | null;
  canceled_at: number | null;
  ended_at: number | null;
  start_date: number;
  created: number;
  currency: string;
  metadata: Record<string, string>;
  livemode: false;
  latest_invoice: string | null;
  items: {
    object: 'list';
    data: {
      id: string;
      object: 'subscription_item';
      price: FakePrice;
      quantity: number;
      current_period_start: number;
      current_period_end: number;
      subscription: string;
    }[];
    has_more: false;
  };
};
export type FakeInvoice = {
  id: string;
  object: 'invoice';
  customer: string;
  status: 'paid' | 'open';
  amount_due: number;
  amount_paid: number;
  amount_remaining: number;
  currency: string;
  created: number;
  billing_reason: 'subscription_create' | 'subscription_cycle';
  attempted: true;
  parent: {
    type: 'subscription_details';
    quote_details: null;
    subscription_details: { subscription: string; metadata: Record<string, string> };
  };
};
export type FakeEvent = {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  type: string;
  livemode: false;
  pending_webhooks: number;
  request: { id: null; idempotency_key: null };
  data: { object: Json };
};
export type Delivery = { eventId: string; type: string; status: number; body: string };

export type StripeFake = {
  /** http://127.0.0.1:port: the STRIPE_API_URL of the server under test, and the origin of the hosted pages. */
  url: string;
  /** The env the server under test needs to talk to the fake. */
  env: Record<string, string>;
  /** Where events are sent (the server's /api/members/stripe-webhook); set once the server listens. */
  setWebhookUrl(url: string): void;
  /** The fake's clock, in milliseconds since the epoch. */
  now(): number;
  /**
   * Moves the fake's clock: each subscription past its period's end renews (a paid invoice, or a failed
   * one when failNextPayment asked: past_due), or ends when set to cancel. Resolves once events are sent.
   */
  advance(ms: number): Promise<void>;
  /** The next renewal of that subscription (of any, without an id) fails: the invoice stays open, the subscription goes past_due. */
  failNextPayment(subscriptionId?: string): void;
  /** Pays a Checkout Session as the hosted page's Pay button does; answers the subscription. */
  pay(sessionId: string): Promise<FakeSubscription>;
  /** Sets a subscription to end at its period's end (the portal's Cancel subscription). */
  cancelAtPeriodEnd(subscriptionId: string): Promise<void>;
  /** A past-due subscription's card works again: the open invoice is paid, the subscription active. */
  recoverPayment(subscriptionId: string): Promise<void>;
  /** Events from now on are kept instead of sent, until release(). */
  hold(): void;
  /** Sends the kept events (in the order given, by default as they happened) and sends new ones again. */
  release(order?: (held: FakeEvent[]) => FakeEvent[]): Promise<Delivery[]>;
  /** Events made so far (every one, sent or held), oldest first. */
  events: FakeEvent[];
  /** Every delivery attempt and the server's answer. */
  deliveries: Delivery[];
  /** Sends an event (again): signed with the right secret and the current time unless told otherwise. */
  deliver(event: FakeEvent, options?: { secret?: string; timestamp?: number; body?: string }): Promise<Delivery>;
  /** Sends an event the fake made before, once more (Stripe's retries and the dashboard's Resend). */
  replay(eventId: string): Promise<Delivery>;
  customers: Map<string, FakeCustomer>;
  products: Map<string, Json>;
  prices: Map<string, FakePrice>;
  sessions: Map<string, FakeSession>;
  subscriptions: Map<string, FakeSubscription>;
  invoices: Map<string, FakeInvoice>;
  /** API requests the fake answered, as `METHOD /path` (what the site asked of Stripe). */
  requests: string[];
  close(): Promise<void>;
};

function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;
}

/** Stripe's form encoding back into an object: `a[b][0][c]=v` -> { a: { b: [{ c: 'v' }] } }. */
export function decodeStripeForm(body: string): Json {
  const root: Json = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const path = key.replace(/\]/g, '').split('[');
    let node: Record<string, unknown> | unknown[] = root;
    path.forEach((part, index) => {
      const last = index === path.length - 1;
      const nextIsIndex = !last && /^\d+$/.test(path[index + 1]!);
      const container = node as Record<string, unknown>;
      if (last) {
        if (part === '' && Array.isArray(node)) (node as unknown[]).push(value);
        else container[part] = value;
        return;
      }
      container[part] ??= nextIsIndex || path[index + 1] === '' ? [] : {};
      node = container[part] as Record<string, unknown>;
    });
  }
  return root;
}

function addInterval(seconds: number, interval: Interval): number {
  const date = new Date(seconds * 1000);
  if (interval === 'month') date.setUTCMonth(date.getUTCMonth() + 1);
  else date.setUTCFullYear(date.getUTCFullYear() + 1);
  return Math.floor(date.getTime() / 1000);
}

function money(amount: number, currency: string): string {
  return new Intl.NumberFormat('en', { style: 'currency', currency: currency.toUpperCase() }).format(amount / 100);
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#15171a">
<p style="color:#635bff;font-weight:bold">Stripe (test stand-in)</p>
<main>${body}</main></body></html>`;
}

const readBody = (request: http.IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });

/** Signs a payload as Stripe does: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.payload" with the endpoint's secret>`. */
export function signStripePayload(payload: string, secret: string, timestamp = Math.floor(Date.now() / 1000)): string {
  const signature = createHmac('sha256', secret).update(`${timestamp}.${payload}`, 'utf8').digest('hex');
  return `t=${timestamp},v1=${signature}`;
}

export type StripeFakeOptions = {
  /** The fake's clock at start (ms since the epoch). @default Date.now() */
  startAt?: number;
  /**
   * Maps a URL the site gave (success, cancel and return URLs, made from SITE_URL) to where the browser
   * reaches the site under test: an e2e site listens on another port than its SITE_URL says.
   */
  siteUrl?: (url: string) => string;
};

export async function startStripeFake(options: StripeFakeOptions = {}): Promise<StripeFake> {
  const toSite = options.siteUrl ?? ((url: string) => url);
  let clock = options.startAt ?? Date.now();
  let webhookUrl: string | undefined;
  let failNext: string | true | undefined;
  let holding = false;
  let held: FakeEvent[] = [];
  const customers = new Map<string, FakeCustomer>();
  const products = new Map<string, Json>();
  const prices = new Map<string, FakePrice>();
  const sessions = new Map<string, FakeSession>();
  const portals = new Map<string, { id: string; customer: string; return_url: string }>();
  const subscriptions = new Map<string, FakeSubscription>();
  const invoices = new Map<string, FakeInvoice>();
  const idempotent = new Map<string, { status: number; body: unknown }>();
  const events: FakeEvent[] = [];
  const deliveries: Delivery[] = [];
  const requests: string[] = [];
  const seconds = () => Math.floor(clock / 1000);
  let base = '';

  const deliver = async (event: FakeEvent, opts: { secret?: string; timestamp?: number; body?: string } = {}): Promise<Delivery> => {
    if (!webhookUrl) throw new Error('The Stripe fake has no webhook URL: call setWebhookUrl(server.url + "/api/members/stripe-webhook")');
    const payload = opts.body ?? JSON.stringify(event, null, 2);
    const response = await fetch(webhookUrl, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json; charset=utf-8',
        'User-Agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
        'Stripe-Signature': signStripePayload(payload, opts.secret ?? FAKE_WEBHOOK_SECRET, opts.timestamp),
      },
      body: payload,
    });
    const delivery = { eventId: event.id, type: event.type, status: response.status, body: await response.text() };
    deliveries.push(delivery);
    return delivery;
  };

  /** Makes an event with a copy of the object as it is now (a later change does not alter a sent event). */
  const emit = async (type: string, object: unknown): Promise<void> => {
    const event: FakeEvent = {
      id: newId('evt'),
      object: 'event',
      api_version: API_VERSION,
      created: seconds(),
      type,
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      data: { object: structuredClone(object) as Json },
    };
    events.push(event);
    if (holding) held.push(event);
    else if (webhookUrl) await deliver(event);
  };

  const makeInvoice = (subscription: FakeSubscription, paid: boolean, reason: FakeInvoice['billing_reason']): FakeInvoice => {
    const item = subscription.items.data[0]!;
    const amount = item.price.unit_amount * item.quantity;
    const invoice: FakeInvoice = {
      id: newId('in'),
      object: 'invoice',
      customer: subscription.customer,
      status: paid ? 'paid' : 'open',
      amount_due: amount,
      amount_paid: paid ? amount : 0,
      amount_remaining: paid ? 0 : amount,
      currency: item.price.currency,
      created: seconds(),
      billing_reason: reason,
      attempted: true,
      parent: {
        type: 'subscription_details',
        quote_details: null,
        subscription_details: { subscription: subscription.id, metadata: { ...subscription.metadata } },
      },
    };
    invoices.set(invoice.id, invoice);
    subscription.latest_invoice = invoice.id;
    return invoice;
  };

  const pay = async (sessionId: string): Promise<FakeSubscription> => {
    const session = sessions.get(sessionId);
    if (!session) throw new Error(`No checkout session ${sessionId}`);
    if (session.status === 'complete') return subscriptions.get(session.subscription!)!;
    const line = session.line_items[0]!;
    const price = prices.get(line.price)!;
    let customerId = session.customer;
    if (!customerId) {
      const customer: FakeCustomer = { id: newId('cus'), object: 'customer', email: null, name: null, metadata: {}, created: seconds() };
      customers.set(customer.id, customer);
      customerId = customer.id;
    }
    const id = newId('sub');
    const now = seconds();
    const subscription: FakeSubscription = {
      id,
      object: 'subscription',
      customer: customerId,
      status: 'active',
      cancel_at_period_end: false,
      cancel_at: null,
      canceled_at: null,
      ended_at: null,
      start_date: now,
      created: now,
      currency: price.currency,
      metadata: { ...session.subscription_metadata },
      livemode: false,
      latest_invoice: null,
      items: {
        object: 'list',
        data: [
          {
            id: newId('si'),
            object: 'subscription_item',
            price,
            quantity: line.quantity,
            current_period_start: now,
            current_period_end: addInterval(now, price.recurring.interval),
            subscription: id,
          },
        ],
        has_more: false,
      },
    };
    subscriptions.set(id, subscription);
    const invoice = makeInvoice(subscription, true, 'subscription_create');
    session.status = 'complete';
    session.customer = customerId;
    session.subscription = id;
    await emit('checkout.session.completed', sessionObject(session));
    await emit('customer.subscription.created', subscription);
    await emit('invoice.payment_succeeded', invoice);
    return subscription;
  };

  const sessionObject = (session: FakeSession): Json => {
    const { line_items: _items, subscription_metadata: _meta, ...rest } = session;
    return { ...rest, payment_status: session.status === 'complete' ? 'paid' : 'unpaid' };
  };

  const setCancel = async (subscriptionId: string, cancel: boolean): Promise<void> => {
    const subscription = subscriptions.get(subscriptionId);
    if (!subscription) throw new Error(`No subscription ${subscriptionId}`);
    subscription.cancel_at_period_end = cancel;
    subscription.canceled_at = cancel ? seconds() : null;
    await emit('customer.subscription.updated', subscription);
  };

  const recoverPayment = async (subscriptionId: string): Promise<void> => {
    const subscription = subscriptions.get(subscriptionId)!;
    const invoice = invoices.get(subscription.latest_invoice!)!;
    invoice.status = 'paid';
    invoice.amount_paid = invoice.amount_due;
    invoice.amount_remaining = 0;
    subscription.status = 'active';
    await emit('invoice.payment_succeeded', invoice);
    await emit('customer.subscription.updated', subscription);
  };

  const advance = async (ms: number): Promise<void> => {
    clock += ms;
    for (const subscription of subscriptions.values()) {
      const item = subscription.items.data[0]!;
      while (subscription.status !== 'canceled' && item.current_period_end <= seconds()) {
        if (subscription.cancel_at_period_end) {
          subscription.status = 'canceled';
          subscription.ended_at = item.current_period_end;
          await emit('customer.subscription.deleted', subscription);
          break;
        }
        if (subscription.status === 'past_due') break;
        item.current_period_start = item.current_period_end;
        item.current_period_end = addInterval(item.current_period_end, item.price.recurring.interval);
        const paid = failNext !== true && failNext !== subscription.id;
        if (!paid) failNext = undefined;
        const invoice = makeInvoice(subscription, paid, 'subscription_cycle');
        if (!paid) subscription.status = 'past_due';
        await emit(paid ? 'invoice.payment_succeeded' : 'invoice.payment_failed', invoice);
        await emit('customer.subscription.updated', subscription);
      }
    }
  };

  const stripeError = (response: http.ServerResponse, status: number, type: string, message: string, code?: string) => {
    response.writeHead(status, { 'Content-Type': 'application/json', 'Request-Id': newId('req') });
    response.end(JSON.stringify({ error: { type, message, ...(code && { code }) } }));
  };

  const answer = (response: http.ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'Content-Type': 'application/json', 'Request-Id': newId('req') });
    response.end(JSON.stringify(body));
  };

  const redirect = (response: http.ServerResponse, location: string) => {
    response.writeHead(303, { Location: location });
    response.end();
  };

  const html = (response: http.ServerResponse, status: number, body: string) => {
    response.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8' });
    response.end(body);
  };

  /** The API (`/v1/...`): the few endpoints the site calls. */
  const api = (method: string, path: string, params: Json): { status: number; body: unknown } => {
    const str = (value: unknown) => (typeof value === 'string' ? value : undefined);
    const meta = (value: unknown) => (value && typeof value === 'object' ? (value as Record<string, string>) : {});
    const missing = (what: string, id: string, param?: string) => ({
      status: 404,
      body: {
        error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such ${what}: '${id}'`, ...(param && { param }) },
      },
    });
    let match: RegExpMatchArray | null;
    if (method === 'POST' && path === '/v1/customers') {
      const customer: FakeCustomer = {
        id: newId('cus'),
        object: 'customer',
        email: str(params.email) ?? null,
        name: str(params.name) ?? null,
        metadata: meta(params.metadata),
        created: seconds(),
      };
      customers.set(customer.id, customer);
      return { status: 200, body: customer };
    }
    if (method === 'GET' && (match = path.match(/^\/v1\/customers\/([\w]+)$/))) {
      const customer = customers.get(match[1]!);
      return customer ? { status: 200, body: customer } : missing('customer', match[1]!);
    }
    if (method === 'POST' && path === '/v1/products') {
      const product = { id: newId('prod'), object: 'product', name: str(params.name), metadata: meta(params.metadata), active: true };
      products.set(product.id, product);
      return { status: 200, body: product };
    }
    if (method === 'POST' && path === '/v1/prices') {
      const product = str(params.product) ?? '';
      if (!products.has(product)) return missing('product', product);
      const recurring = meta(params.recurring);
      const price: FakePrice = {
        id: newId('price'),
        object: 'price',
        product,
        currency: str(params.currency) ?? 'usd',
        unit_amount: Number(params.unit_amount),
        recurring: { interval: recurring.interval === 'year' ? 'year' : 'month', interval_count: 1 },
        nickname: str(params.nickname) ?? null,
        active: true,
      };
      prices.set(price.id, price);
      return { status: 200, body: price };
    }
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      const lines = (Array.isArray(params.line_items) ? params.line_items : []) as Record<string, string>[];
      const line = lines[0];
      if (!line || !prices.has(line.price ?? '')) return missing('price', line?.price ?? '');
      const customer = str(params.customer);
      if (customer && !customers.has(customer)) return missing('customer', customer, 'customer');
      const id = newId('cs_test');
      const session: FakeSession = {
        id,
        object: 'checkout.session',
        mode: str(params.mode) ?? 'payment',
        status: 'open',
        customer: customer ?? null,
        client_reference_id: str(params.client_reference_id) ?? null,
        metadata: meta(params.metadata),
        subscription: null,
        success_url: str(params.success_url) ?? '',
        cancel_url: str(params.cancel_url) ?? '',
        url: `${base}/checkout/${id}`,
        line_items: [{ price: line.price!, quantity: Number(line.quantity ?? 1) }],
        subscription_metadata: meta(meta(params.subscription_data).metadata),
      };
      sessions.set(id, session);
      return { status: 200, body: sessionObject(session) };
    }
    if (method === 'POST' && path === '/v1/billing_portal/sessions') {
      const customer = str(params.customer) ?? '';
      if (!customers.has(customer)) return missing('customer', customer, 'customer');
      const portal = { id: newId('bps'), customer, return_url: str(params.return_url) ?? base };
      portals.set(portal.id, portal);
      return { status: 200, body: { ...portal, object: 'billing_portal.session', url: `${base}/portal/${portal.id}`, livemode: false } };
    }
    if (method === 'GET' && (match = path.match(/^\/v1\/subscriptions\/([\w]+)$/))) {
      const subscription = subscriptions.get(match[1]!);
      return subscription ? { status: 200, body: subscription } : missing('subscription', match[1]!);
    }
    return { status: 404, body: { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path})` } } };
  };

  const checkoutPage = (session: FakeSession): string => {
    const price = prices.get(session.line_items[0]!.price)!;
    const product = products.get(price.product);
    const email = session.customer ? customers.get(session.customer)?.email : undefined;
    return page(
      `Pay ${String(product?.name ?? 'membership')}`,
      `<h1>${escapeHtml(String(product?.name ?? 'Membership'))}</h1>
<p data-testid="checkout-amount">${escapeHtml(money(price.unit_amount, price.currency))} per ${price.recurring.interval}</p>
${email ? `<p>Paying as ${escapeHtml(email)}</p>` : ''}
<p>Test mode: no card is charged.</p>
<form method="post" action="/checkout/${session.id}/pay"><button type="submit">Pay</button></form>
<p><a href="${escapeHtml(toSite(session.cancel_url))}">Back to the site</a></p>`,
    );
  };

  const portalPage = (portal: { id: string; customer: string; return_url: string }): string => {
    const subscription = [...subscriptions.values()].reverse().find((s) => s.customer === portal.customer);
    const item = subscription?.items.data[0];
    const end = item ? new Date(item.current_period_end * 1000).toISOString().slice(0, 10) : '';
    const state = !subscription
      ? '<p>No subscription.</p>'
      : subscription.status === 'canceled'
        ? '<p>Your subscription has ended.</p>'
        : subscription.cancel_at_period_end
          ? `<p data-testid="portal-status">Your subscription ends on ${end}.</p>
<form method="post" action="/portal/${portal.id}/renew"><button type="submit">Renew subscription</button></form>`
          : `<p data-testid="portal-status">${escapeHtml(money(item!.price.unit_amount, item!.price.currency))} per ${item!.price.recurring.interval}, renews on ${end}.</p>
<form method="post" action="/portal/${portal.id}/cancel"><button type="submit">Cancel subscription</button></form>`;
    return page(
      'Manage billing',
      `<h1>Manage billing</h1>${state}<p><a href="${escapeHtml(toSite(portal.return_url))}">Return to the site</a></p>`,
    );
  };

  const server = http.createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', base);
      const path = url.pathname;
      const method = request.method ?? 'GET';
      const body = await readBody(request);
      let match: RegExpMatchArray | null;
      if (path.startsWith('/v1/')) {
        requests.push(`${method} ${path}`);
        const auth = request.headers.authorization ?? '';
        if (auth !== `Bearer ${FAKE_STRIPE_KEY}`) {
          return stripeError(response, 401, 'invalid_request_error', 'Invalid API Key provided.');
        }
        const key = request.headers['idempotency-key'];
        const cacheKey = typeof key === 'string' && method === 'POST' ? `${path} ${key}` : undefined;
        const cached = cacheKey ? idempotent.get(cacheKey) : undefined;
        if (cached) return answer(response, cached.status, cached.body);
        const params = method === 'GET' ? decodeStripeForm(url.search.slice(1)) : decodeStripeForm(body);
        const result = api(method, path, params);
        if (cacheKey) idempotent.set(cacheKey, result);
        return answer(response, result.status, result.body);
      }
      if (method === 'GET' && (match = path.match(/^\/checkout\/([\w]+)$/))) {
        const session = sessions.get(match[1]!);
        return session ? html(response, 200, checkoutPage(session)) : html(response, 404, page('Not found', '<h1>No such checkout</h1>'));
      }
      if (method === 'POST' && (match = path.match(/^\/checkout\/([\w]+)\/pay$/))) {
        const session = sessions.get(match[1]!);
        if (!session) return html(response, 404, page('Not found', '<h1>No such checkout</h1>'));
        await pay(session.id);
        return redirect(response, toSite(session.success_url));
      }
      if (method === 'GET' && (match = path.match(/^\/portal\/([\w]+)$/))) {
        const portal = portals.get(match[1]!);
        return portal ? html(response, 200, portalPage(portal)) : html(response, 404, page('Not found', '<h1>No such session</h1>'));
      }
      if (method === 'POST' && (match = path.match(/^\/portal\/([\w]+)\/(cancel|renew)$/))) {
        const portal = portals.get(match[1]!);
        const subscription = portal && [...subscriptions.values()].reverse().find((s) => s.customer === portal.customer);
        if (!portal || !subscription) return html(response, 404, page('Not found', '<h1>No subscription</h1>'));
        await setCancel(subscription.id, match[2] === 'cancel');
        return redirect(response, toSite(portal.return_url));
      }
      // The test clock over HTTP, for a browser test in another process.
      if (method === 'POST' && path === '/test/advance') {
        const { ms } = JSON.parse(body || '{}') as { ms?: number };
        await advance(Number(ms ?? 0));
        return answer(response, 200, { now: clock });
      }
      if (method === 'POST' && path === '/test/fail-next-payment') {
        const { subscription } = JSON.parse(body || '{}') as { subscription?: string };
        failNext = subscription ?? true;
        return answer(response, 200, { failNext });
      }
      if (method === 'GET' && path === '/test/clock') return answer(response, 200, { now: clock });
      // A browser asks every origin for its icon: none, without a 404 in the console.
      if (method === 'GET' && path === '/favicon.ico') {
        response.writeHead(204);
        return response.end();
      }
      return html(response, 404, page('Not found', '<h1>Not found</h1>'));
    })().catch((error: unknown) => {
      if (!response.headersSent) stripeError(response, 500, 'api_error', String(error));
      else response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: base,
    env: { STRIPE_API_URL: base, STRIPE_SECRET_KEY: FAKE_STRIPE_KEY, STRIPE_WEBHOOK_SECRET: FAKE_WEBHOOK_SECRET },
    setWebhookUrl: (url) => {
      webhookUrl = url;
    },
    now: () => clock,
    advance,
    failNextPayment: (subscriptionId) => {
      failNext = subscriptionId ?? true;
    },
    pay,
    cancelAtPeriodEnd: (id) => setCancel(id, true),
    recoverPayment,
    hold: () => {
      holding = true;
    },
    release: async (order) => {
      holding = false;
      const batch = order ? order(held) : held;
      held = [];
      const sent: Delivery[] = [];
      for (const event of batch) sent.push(await deliver(event));
      return sent;
    },
    events,
    deliveries,
    deliver,
    replay: (eventId) => {
      const event = events.find((e) => e.id === eventId);
      if (!event) throw new Error(`No event ${eventId}`);
      return deliver(event);
    },
    customers,
    products,
    prices,
    sessions,
    subscriptions,
    invoices,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
