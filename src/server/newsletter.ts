/** Newsletter subscriptions: idempotent sign-up, token-based unsubscribe. */
import { randomUUID } from 'node:crypto';
import { encodeBase32LowerCaseNoPadding } from '@oslojs/encoding';
import type { Runtime } from './runtime.ts';
import { notFound } from './errors.ts';
import { nowIso } from './clock.ts';

export async function subscribe(runtime: Runtime, email: string): Promise<void> {
  const bytes = new Uint8Array(20);
  crypto.getRandomValues(bytes);
  await runtime.store.subscribers.upsert({ id: randomUUID(), email, token: encodeBase32LowerCaseNoPadding(bytes), createdAt: nowIso() });
}

export async function unsubscribe(runtime: Runtime, token: string): Promise<{ email: string }> {
  const subscriber = await runtime.store.subscribers.unsubscribe(token, nowIso());
  if (!subscriber) throw notFound('Subscription');
  return { email: subscriber.email };
}
