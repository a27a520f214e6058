/**
 * 90 days of newsletter sign-ups for the demo (issue 33), so the dashboard's subscriber chart shows a
 * list that grows: a few sign-ups a day (more lately), most confirmed within hours, some never, and a
 * few who leave weeks later. Addresses are on example.com (reserved: no mail can reach anyone).
 * Deterministic for a given `now`, like the view history.
 */
import { createHash } from 'node:crypto';
import type { Subscriber } from '../../schemas/newsletter.ts';
import type { SubscriberRepository } from '../../store/types.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const HISTORY_DAYS = 90;

function fraction(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32LE(0) / 2 ** 32;
}

function hexOf(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Writes the history (confirmed, pending and unsubscribed readers); answers how many it wrote. */
export async function seedSubscriberHistory(subscribers: SubscriberRepository, now: number): Promise<number> {
  const iso = (ms: number) => new Date(Math.min(ms, now)).toISOString();
  let n = 0;
  for (let back = HISTORY_DAYS - 1; back >= 0; back--) {
    // Zero to two a day at first, one to four lately: about 160 in all.
    const signUps = Math.floor(0.6 + (1.4 * (HISTORY_DAYS - back)) / HISTORY_DAYS + 2 * fraction(`signups:${back}`));
    for (let i = 0; i < signUps; i++, n++) {
      const key = `reader:${n}`;
      const createdAt = now - back * DAY - Math.floor(fraction(`${key}:at`) * 20 * HOUR);
      const record: Subscriber = {
        id: `demo-reader-${n}`,
        email: `reader${n + 1}@example.com`,
        token: hexOf(`${key}:token`).slice(0, 32),
        createdAt: iso(createdAt),
        // A confirmation link was sent: the hash stands for its token (no mail has it: demo records).
        confirmTokenHash: hexOf(`${key}:confirm`),
        confirmSentAt: iso(createdAt),
        confirmExpiresAt: iso(createdAt + 7 * DAY),
      };
      const confirmedAfter = fraction(`${key}:confirm-after`) * 6 * HOUR;
      if (fraction(`${key}:confirms`) < 0.88 && createdAt + confirmedAfter < now) {
        record.confirmedAt = iso(createdAt + confirmedAfter);
        // About one in nine leaves, one to eight weeks later (if that is already past).
        const leaves = createdAt + (7 + fraction(`${key}:stays`) * 49) * DAY;
        if (fraction(`${key}:leaves`) < 0.11 && leaves < now) record.unsubscribedAt = iso(leaves);
      }
      await subscribers.upsert(record);
    }
  }
  return n;
}
