/**
 * 90 days of demo members (issue 48), so the Members tab and the Overview's member charts show a newsroom
 * at work: a sign-up every other day or so, about a third subscribing (monthly mostly, some yearly), a few
 * cancelling at their period's end, one behind on payment and one comped. Addresses are on example.com
 * (reserved: no mail can reach anyone); Stripe ids are made up (no Stripe account has them). Deterministic
 * for a given `now`, like the subscriber history.
 */
import { createHash } from 'node:crypto';
import type { Member, MemberEvent, MemberSubscription } from '../../schemas/member.ts';
import type { MemberRepository } from '../../store/types.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const HISTORY_DAYS = 90;
const FIRST = ['Amara', 'Bruno', 'Chloe', 'Dmitri', 'Elena', 'Farid', 'Grace', 'Hiro', 'Ines', 'Jonas', 'Kemi', 'Lucas', 'Maya', 'Nils'];
const LAST = ['Okafor', 'Silva', 'Martin', 'Ivanov', 'Rossi', 'Haddad', 'Chen', 'Tanaka', 'Garcia', 'Berg', 'Adeyemi', 'Moreau'];

function fraction(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32LE(0) / 2 ** 32;
}

/** Writes the members; answers how many it wrote. */
export async function seedMemberHistory(members: MemberRepository, now: number): Promise<number> {
  const iso = (ms: number) => new Date(Math.min(ms, now)).toISOString();
  let n = 0;
  for (let back = HISTORY_DAYS - 1; back >= 1; back--) {
    // None or one a day, a little more often lately: about 45 in all.
    const signUps = fraction(`member-signups:${back}`) < 0.35 + (0.3 * (HISTORY_DAYS - back)) / HISTORY_DAYS ? 1 : 0;
    for (let i = 0; i < signUps; i++, n++) {
      const key = `member:${n}`;
      const createdAt = now - back * DAY - Math.floor(fraction(`${key}:at`) * 20 * HOUR);
      const name = `${FIRST[n % FIRST.length]} ${LAST[Math.floor(fraction(`${key}:last`) * LAST.length)]}`;
      const history: MemberEvent[] = [{ at: iso(createdAt), kind: 'signed-up', text: 'Signed up.' }];
      const member: Member = {
        id: `demo-member-${n}`,
        email: `member${n + 1}@example.com`,
        name,
        newsletter: fraction(`${key}:newsletter`) < 0.5,
        createdAt: iso(createdAt),
        lastSignInAt: iso(createdAt + fraction(`${key}:seen`) * (now - createdAt)),
        history,
      };
      const subscribes = fraction(`${key}:subscribes`) < 0.35;
      const startedAt = createdAt + Math.floor(fraction(`${key}:waits`) * Math.min(20, back) * DAY);
      if (subscribes && startedAt < now) {
        const yearly = fraction(`${key}:yearly`) < 0.2;
        const interval = yearly ? 'year' : 'month';
        const periodMs = (yearly ? 365 : 30) * DAY;
        const periods = Math.floor((now - startedAt) / periodMs);
        const periodEnd = startedAt + (periods + 1) * periodMs;
        const amount = yearly ? 5000 : 500;
        const subscription: MemberSubscription = {
          id: `sub_demo${n}`,
          status: 'active',
          interval,
          amount,
          currency: 'usd',
          startedAt: iso(startedAt),
          currentPeriodEnd: new Date(periodEnd).toISOString(),
          cancelAtPeriodEnd: false,
          syncedAt: iso(startedAt + periods * periodMs),
        };
        const plan = `${yearly ? 'yearly' : 'monthly'} plan`;
        history.push({ at: iso(startedAt), kind: 'subscription-started', text: `Subscribed to the ${plan}.` });
        for (let p = 0; p <= periods; p++)
          history.push({
            at: iso(startedAt + p * periodMs),
            kind: 'payment-succeeded',
            text: `Paid $${(amount / 100).toFixed(2)} for the ${plan}.`,
          });
        const fate = fraction(`${key}:fate`);
        if (fate < 0.2 && periods >= 1) {
          // Cancelled at the end of its first period.
          const ended = startedAt + periodMs;
          Object.assign(subscription, {
            status: 'canceled',
            cancelAtPeriodEnd: true,
            currentPeriodEnd: iso(ended),
            endedAt: iso(ended),
            syncedAt: iso(ended),
          });
          history.splice(3);
          history.push({ at: iso(ended), kind: 'subscription-ended', text: 'The subscription ended.' });
        } else if (fate > 0.9 && !yearly && periods >= 1) {
          // The last renewal failed: past due through the grace period, free after it.
          const failed = startedAt + periods * periodMs;
          Object.assign(subscription, { status: 'past_due', pastDueSince: iso(failed), syncedAt: iso(failed) });
          history.pop();
          history.push({ at: iso(failed), kind: 'payment-failed', text: `A payment of $${(amount / 100).toFixed(2)} failed.` });
        }
        member.stripeCustomerId = `cus_demo${n}`;
        member.subscription = subscription;
      } else if (n % 17 === 5) {
        const at = createdAt + DAY;
        member.comp = { at: iso(at), by: 'demo' };
        history.push({ at: iso(at), kind: 'comp-granted', text: 'Comped a paid subscription without an end date (a contributor).' });
      }
      history.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
      await members.insert(member);
    }
  }
  return n;
}
