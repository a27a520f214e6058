/**
 * Paid subscriptions through Stripe (issue 48), against the local Stripe stand-in: the plans, Checkout
 * and the Portal, and webhooks verified, applied once each, in any order, replayed safely; a member's
 * standing follows the subscription through a failed renewal and a cancellation. One server and one fake.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.ts';
import { memberStatus, readerLevelOf, type Member, type PublicMember } from '../../src/schemas/member.ts';
import type { PublicPlans } from '../../src/schemas/billing.ts';
import { outboxFilesFor, readMail, signInMember } from '../helpers/members.ts';
import { FAKE_STRIPE_KEY, FAKE_WEBHOOK_SECRET, startStripeFake, type FakeEvent, type StripeFake } from '../helpers/stripe-fake.ts';
import { TestClient, adminClient, expectError, read, readDataFile, startApiServer, withTestDatabase } from './support.ts';
import { testingPostgres } from '../helpers/postgres.ts';
import { findLeaks } from '../helpers/server-logs.ts';

const DAY_MS = 86_400_000;
const PLANS = { currency: 'usd', monthly: 500, yearly: 5000 };

let server: TestServer;
let fake: StripeFake;
let admin: TestClient;
/** GET /api/members/plans before any were set. */
let unsetPlans: Response;

beforeAll(async () => {
  fake = await startStripeFake();
  server = await startApiServer(fake.env);
  fake.setWebhookUrl(new URL('/api/members/stripe-webhook', server.url).href);
  admin = await adminClient(server);
  unsetPlans = await new TestClient(server.url).get('/api/members/plans');
  const saved = await read(await admin.put('/api/members/plans', PLANS));
  expect(saved.status, JSON.stringify(saved.body)).toBe(200);
});

afterAll(async () => {
  await server?.stop();
  await fake?.close();
});

async function storedMember(email: string): Promise<Member> {
  const members = testingPostgres()
    ? await withTestDatabase(server.dataDir, async (db) =>
        (await db.query<{ doc: Member }>('SELECT doc FROM members')).rows.map((r) => r.doc),
      )
    : (await readDataFile<{ members: Member[] }>(server.dataDir, 'members')).members;
  const member = members.find((m) => m.email === email);
  if (!member) throw new Error(`No stored member ${email}`);
  return member;
}

/** A client carrying a member's session cookie (and nothing else). */
function memberClient(cookie: string): TestClient {
  const client = new TestClient(server.url);
  const index = cookie.indexOf('=');
  client.cookies.set(cookie.slice(0, index), cookie.slice(index + 1));
  return client;
}

async function me(client: TestClient): Promise<PublicMember> {
  const { status, body } = await read<{ member: PublicMember }>(await client.get('/api/members/me'));
  expect(status).toBe(200);
  return body.member;
}

/** Mails to an address whose subject matches. */
async function mailsTo(email: string, subject: RegExp): Promise<{ subject: string; html: string; text: string }[]> {
  const mails = await Promise.all(outboxFilesFor(server.dataDir, email).map((file) => readMail(file)));
  return mails.filter((mail) => subject.test(mail.subject));
}

let seq = 0;

/** A signed-in member with a session of their own. */
async function newMember(label: string): Promise<{ email: string; client: TestClient }> {
  const email = `${label}-${++seq}@example.com`;
  const { cookie } = await signInMember(server.url, server.dataDir, email, `Reader ${label}`);
  return { email, client: memberClient(cookie) };
}

/** Starts a checkout as the member and answers the fake's session id. */
async function startCheckout(client: TestClient, interval: 'month' | 'year' = 'month'): Promise<string> {
  const { status, body } = await read<{ url: string }>(await client.post('/api/members/checkout', { interval }));
  expect(status, JSON.stringify(body)).toBe(200);
  expect(body.url.startsWith(`${fake.url}/checkout/`)).toBe(true);
  return body.url.slice(body.url.lastIndexOf('/') + 1);
}

/** A member who subscribed through the fake's Checkout (events sent as they happen). */
async function paidMember(label: string): Promise<{ email: string; client: TestClient; subscriptionId: string }> {
  const member = await newMember(label);
  const subscription = await fake.pay(await startCheckout(member.client));
  return { ...member, subscriptionId: subscription.id };
}

function eventsOf(subscriptionId: string): FakeEvent[] {
  return fake.events.filter((event) => JSON.stringify(event.data.object).includes(subscriptionId));
}

describe('plans', () => {
  it('are public (404 until set), and only an admin sets them (a bad currency is a 400); unchanged amounts make no new Stripe price', async () => {
    await expectError(unsetPlans, 404, /plans not found/);
    const plans = await read<PublicPlans>(await new TestClient(server.url).get('/api/members/plans'));
    expect(plans).toEqual({ status: 200, body: { available: true, ...PLANS } });

    const { client } = await newMember('plans');
    await expectError(await client.put('/api/members/plans', PLANS), 401);
    const created = await read(
      await admin.post('/api/users', { username: `editor-${++seq}`, role: 'editor', password: 'editor-password-1' }),
    );
    expect(created.status).toBe(201);
    const editor = new TestClient(server.url);
    await editor.login((created.body as { user: { username: string } }).user.username, 'editor-password-1');
    await expectError(await editor.put('/api/members/plans', PLANS), 403);
    const bad = await expectError(await admin.put('/api/members/plans', { ...PLANS, currency: 'dollars' }), 400);
    expect(bad.issues?.[0]?.path).toEqual(['currency']);
    const stripeObjects = fake.products.size + fake.prices.size;
    const unknown = await expectError(await admin.put('/api/members/plans', { ...PLANS, currency: 'xyz' }), 400, /currency/);
    expect(unknown.issues?.[0]?.path).toEqual(['currency']);
    expect(fake.products.size + fake.prices.size).toBe(stripeObjects);

    const pricesBefore = fake.prices.size;
    const same = await read<{ stripe: { monthlyPriceId: string; yearlyPriceId: string } }>(await admin.put('/api/members/plans', PLANS));
    expect(same.status).toBe(200);
    expect(fake.prices.size).toBe(pricesBefore);
    // Prices are immutable in Stripe: a new amount is a new Price, the other plan keeps its own.
    const raised = await read<{ stripe: { monthlyPriceId: string; yearlyPriceId: string } }>(
      await admin.put('/api/members/plans', { ...PLANS, monthly: 700 }),
    );
    expect(fake.prices.size).toBe(pricesBefore + 1);
    expect(raised.body.stripe.yearlyPriceId).toBe(same.body.stripe.yearlyPriceId);
    expect(fake.prices.get(raised.body.stripe.monthlyPriceId)).toMatchObject({
      unit_amount: 700,
      currency: 'usd',
      recurring: { interval: 'month' },
    });
    expect((await admin.put('/api/members/plans', PLANS)).status).toBe(200);
    expect(fake.products.size).toBe(1);
  });
});

describe('checkout and portal', () => {
  it('needs a member session', async () => {
    await expectError(await new TestClient(server.url).post('/api/members/checkout', { interval: 'month' }), 401);
    await expectError(await new TestClient(server.url).post('/api/members/portal'), 401);
  });

  it('makes one Stripe customer per member (a new one if Stripe lost it), and the portal needs one', async () => {
    const { email, client } = await newMember('customer');
    await expectError(await client.post('/api/members/portal'), 409, /subscribe first/);
    await startCheckout(client);
    await startCheckout(client, 'year');
    const customers = [...fake.customers.values()].filter((c) => c.email === email);
    expect(customers).toHaveLength(1);
    const member = await storedMember(email);
    expect(customers[0]!.metadata).toEqual({ member_id: member.id });
    expect(member.stripeCustomerId).toBe(customers[0]!.id);
    const portal = await read<{ url: string }>(await client.post('/api/members/portal'));
    expect(portal.status).toBe(200);
    expect(portal.body.url.startsWith(`${fake.url}/portal/`)).toBe(true);

    // The customer gone at Stripe (deleted in its dashboard, or test keys swapped for live ones): a new one, kept.
    fake.customers.delete(customers[0]!.id);
    await expectError(await client.post('/api/members/portal'), 409, /subscribe again/);
    await startCheckout(client);
    const renewed = await storedMember(email);
    expect(renewed.stripeCustomerId).not.toBe(customers[0]!.id);
    expect(fake.customers.get(renewed.stripeCustomerId!)?.metadata).toEqual({ member_id: member.id });
  });
});

describe('webhooks', () => {
  it('refuse a bad or old signature and store nothing', async () => {
    const { email, client } = await newMember('signature');
    const sessionId = await startCheckout(client);
    // Paid while the fake keeps its events; they are then dropped, to be sent below by hand.
    fake.hold();
    await fake.pay(sessionId);
    await fake.release(() => []);
    const before = await storedMember(email);
    const event = fake.events.at(-3)!;
    expect(event.type).toBe('checkout.session.completed');

    const wrong = await fake.deliver(event, { secret: 'whsec_notTheEndpointsSecret' });
    expect(wrong.status).toBe(400);
    const old = await fake.deliver(event, { timestamp: Math.floor(Date.now() / 1000) - 600 });
    expect(old.status).toBe(400);
    const tampered = JSON.stringify(event).replace(event.id, 'evt_forged');
    const forged = await fake.deliver(event, { body: tampered, secret: 'whsec_other' });
    expect(forged.status).toBe(400);
    const unsigned = await fetch(new URL('/api/members/stripe-webhook', server.url), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(event),
    });
    await expectError(unsigned, 400, /Stripe-Signature/);
    // The body limit of every JSON endpoint holds here too, before any signature is computed.
    const huge = `{"pad":"${'x'.repeat(1024 * 1024)}"}`;
    const tooLarge = await fake.deliver({ ...event, id: 'evt_huge' }, { body: huge });
    expect(tooLarge.status).toBe(413);
    expect(await storedMember(email)).toEqual(before);
    expect(before.subscription).toBeUndefined();

    // The same event, signed right: applied.
    expect((await fake.deliver(event)).status).toBe(200);
    expect((await storedMember(email)).history.some((line) => line.stripeEventId === event.id)).toBe(true);
  });

  it('answer 200 to an event the site does not act on, and change nothing', async () => {
    const event: FakeEvent = { ...fake.events[0]!, id: 'evt_unhandled_1', type: 'customer.created' };
    const delivery = await fake.deliver(event);
    expect(delivery.status).toBe(200);
    expect(JSON.parse(delivery.body)).toEqual({ received: true, outcome: 'ignored' });
  });
});

describe('a subscription', () => {
  it('checkout -> pay -> the member is paid, with one receipt; replays change nothing', async () => {
    const { email, client } = await newMember('payer');
    const sessionId = await startCheckout(client);
    const checkoutPage = await (await fetch(`${fake.url}/checkout/${sessionId}`)).text();
    expect(checkoutPage).toContain('$5.00 per month');
    const paid = await fetch(`${fake.url}/checkout/${sessionId}/pay`, { method: 'POST', redirect: 'manual' });
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe('http://localhost:4321/account?checkout=success');
    const session = fake.sessions.get(sessionId)!;
    const sent = eventsOf(session.subscription!);
    expect(sent.map((e) => e.type)).toEqual(['checkout.session.completed', 'customer.subscription.created', 'invoice.payment_succeeded']);
    expect(fake.deliveries.filter((d) => sent.some((e) => e.id === d.eventId)).map((d) => d.status)).toEqual([200, 200, 200]);

    const standing = await me(client);
    expect(standing).toMatchObject({ status: 'paid', level: 'paid', subscription: { status: 'active', interval: 'month', amount: 500 } });
    const member = await storedMember(email);
    expect(member.history.filter((line) => line.stripeEventId).map((line) => line.kind)).toEqual([
      'subscription-started',
      'subscription-started',
      'payment-succeeded',
    ]);
    expect(member.history.at(-1)!.text).toBe('Paid $5.00 for the monthly plan.');
    const receipts = await mailsTo(email, /receipt/);
    expect(receipts).toHaveLength(1);
    expect(receipts[0]!.text).toContain('We received $5.00 for your monthly membership');
    expect(receipts[0]!.text).toContain('http://localhost:4321/account');

    // Stripe resends (a retry, the dashboard's Resend): each is answered 200 and applied no second time.
    for (const event of sent) {
      const again = await fake.replay(event.id);
      expect(again.status).toBe(200);
      expect(JSON.parse(again.body)).toMatchObject({ outcome: 'duplicate' });
    }
    const after = await storedMember(email);
    expect(after.history).toEqual(member.history);
    expect(after.subscription).toEqual(member.subscription);
    expect(await mailsTo(email, /receipt/)).toHaveLength(1);

    await expectError(await client.post('/api/members/checkout', { interval: 'year' }), 409, /already have a paid subscription/);
  });

  it('ends in the right state when events come out of order (updated before created)', async () => {
    const { email, client } = await newMember('order');
    const sessionId = await startCheckout(client);
    fake.hold();
    const subscription = await fake.pay(sessionId);
    await fake.cancelAtPeriodEnd(subscription.id);
    const sent = await fake.release((held) => [...held].reverse());
    expect(sent.map((d) => d.type)).toEqual([
      'customer.subscription.updated',
      'invoice.payment_succeeded',
      'customer.subscription.created',
      'checkout.session.completed',
    ]);
    expect(sent.map((d) => d.status)).toEqual([200, 200, 200, 200]);
    const member = await storedMember(email);
    expect(member.subscription).toMatchObject({ id: subscription.id, status: 'active', cancelAtPeriodEnd: true });
    expect(member.history.filter((line) => line.stripeEventId)).toHaveLength(4);
    expect(await mailsTo(email, /receipt/)).toHaveLength(1);
  });

  it('applies events that arrive at the same moment once each', async () => {
    const { email, client } = await newMember('together');
    const sessionId = await startCheckout(client);
    fake.hold();
    await fake.pay(sessionId);
    const held = fake.events.slice(-3);
    await fake.release(() => []);
    const answers = await Promise.all([...held, ...held].map((event) => fake.deliver(event)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const member = await storedMember(email);
    expect(member.subscription).toMatchObject({ status: 'active' });
    expect(
      member.history
        .filter((line) => line.stripeEventId)
        .map((line) => line.stripeEventId)
        .sort(),
    ).toEqual(held.map((e) => e.id).sort());
    expect(await mailsTo(email, /receipt/)).toHaveLength(1);
  });

  it('ends in the right state when events come out of order (deleted before updated)', async () => {
    const { email, client } = await paidMember('ended');
    fake.hold();
    const subscriptionId = (await storedMember(email)).subscription!.id;
    await fake.cancelAtPeriodEnd(subscriptionId);
    await fake.advance(32 * DAY_MS);
    const mine = (held: FakeEvent[]) => held.filter((e) => JSON.stringify(e.data.object).includes(subscriptionId));
    const others = (held: FakeEvent[]) => held.filter((e) => !JSON.stringify(e.data.object).includes(subscriptionId));
    const sent = await fake.release((held) => [...mine(held).reverse(), ...others(held)]);
    expect(sent.slice(0, 2).map((d) => d.type)).toEqual(['customer.subscription.deleted', 'customer.subscription.updated']);
    expect(sent.every((d) => d.status === 200)).toBe(true);
    const member = await storedMember(email);
    expect(member.subscription).toMatchObject({ id: subscriptionId, status: 'canceled', cancelAtPeriodEnd: true });
    expect(memberStatus(member, fake.now())).toBe('free');
    expect(await me(client)).toMatchObject({ status: 'free', level: 'free' });
  });

  it('past due keeps the paid level through the grace period and loses it after; a card that works again restores it', async () => {
    const { email, client, subscriptionId } = await paidMember('late');
    fake.failNextPayment(subscriptionId);
    await fake.advance(32 * DAY_MS);
    const failedAt = fake.now();
    const member = await storedMember(email);
    expect(member.subscription).toMatchObject({ status: 'past_due' });
    const since = Date.parse(member.subscription!.pastDueSince!);
    expect(Math.abs(since - failedAt)).toBeLessThan(1000);
    expect(memberStatus(member, fake.now())).toBe('past-due');
    expect(readerLevelOf(member, fake.now() + 6 * DAY_MS)).toBe('paid');
    expect(memberStatus(member, fake.now() + 8 * DAY_MS)).toBe('free');
    expect(await me(client)).toMatchObject({ status: 'past-due', level: 'paid' });
    expect(member.history.at(-2)!.text).toBe('A payment of $5.00 for the monthly plan failed.');

    const notices = await mailsTo(email, /did not go through/);
    expect(notices).toHaveLength(1);
    expect(notices[0]!.text).toContain('Manage billing: http://localhost:4321/account');
    const failedEvent = fake.events.find((e) => e.type === 'invoice.payment_failed' && JSON.stringify(e).includes(subscriptionId))!;
    expect((await fake.replay(failedEvent.id)).status).toBe(200);
    expect(await mailsTo(email, /did not go through/)).toHaveLength(1);

    await fake.recoverPayment(subscriptionId);
    const recovered = await storedMember(email);
    expect(recovered.subscription).toMatchObject({ status: 'active' });
    expect(recovered.subscription!.pastDueSince).toBeUndefined();
    expect(memberStatus(recovered, fake.now() + 8 * DAY_MS)).toBe('paid');
  });

  it('cancelled in the portal stays paid until the period ends, then is free once Stripe deletes it', async () => {
    const { email, client, subscriptionId } = await paidMember('leaver');
    const portal = await read<{ url: string }>(await client.post('/api/members/portal'));
    const portalPage = await (await fetch(portal.body.url)).text();
    expect(portalPage).toContain('Cancel subscription');
    const cancelled = await fetch(`${portal.body.url}/cancel`, { method: 'POST', redirect: 'manual' });
    expect(cancelled.status).toBe(303);
    expect(cancelled.headers.get('location')).toBe('http://localhost:4321/account');

    const member = await storedMember(email);
    expect(member.subscription).toMatchObject({ status: 'active', cancelAtPeriodEnd: true });
    const periodEnd = Date.parse(member.subscription!.currentPeriodEnd);
    expect(memberStatus(member, fake.now())).toBe('paid');
    expect(memberStatus(member, periodEnd + 1000)).toBe('free');
    expect(await me(client)).toMatchObject({ status: 'paid', subscription: { cancelAtPeriodEnd: true } });
    expect(member.history.at(-1)!.text).toMatch(/^Set the subscription to the monthly plan to end on \d+ \w+ \d{4}\.$/);

    await fake.advance(periodEnd - fake.now() + 1000);
    expect(eventsOf(subscriptionId).at(-1)!.type).toBe('customer.subscription.deleted');
    const ended = await storedMember(email);
    expect(ended.subscription).toMatchObject({ status: 'canceled' });
    expect(ended.history.at(-1)).toMatchObject({ kind: 'subscription-ended', text: 'The subscription to the monthly plan ended.' });
    expect(await me(client)).toMatchObject({ status: 'free', level: 'free' });
  });
});

describe('the log', () => {
  it('holds no e-mail address, Stripe key or webhook secret after all of the above', () => {
    expect(server.rawOutput()).toContain('[billing] Stripe event applied');
    expect(findLeaks(server.rawOutput(), [FAKE_STRIPE_KEY, FAKE_WEBHOOK_SECRET])).toEqual([]);
    // The scan knows the shape of Stripe's secrets, whichever key a site uses.
    expect(findLeaks('{"msg":"key sk_live_51AbCdEfGhIjKlMn"}', [])).toHaveLength(1);
    expect(findLeaks('{"msg":"secret whsec_AbCdEfGh12345678"}', [])).toHaveLength(1);
  });
});
