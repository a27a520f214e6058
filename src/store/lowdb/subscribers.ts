/**
 * The lowdb subscriber repository: subscribers in hashed bucket files by e-mail (layout 2, subscribers/<bucket>.json),
 * so a sign-up rewrites one small file; in memory, indexes by id, e-mail, token hash and confirmation hash.
 */
import { subscriberStatus, type Subscriber, type SubscriberCounts, type SubscriberFilter } from '../../schemas/newsletter.ts';
import type { Page, SubscriberListRepository } from '../types.ts';
import { bucketOf, type BucketSet } from './layout.ts';
import { hashToken, isSameSecret } from '../../security/secrets.ts';

/** The layout-1 subscribers.json (read by the migration). */
export type SubscribersFile = { subscribers: Subscriber[] };
/** subscribers/<bucket>.json: the subscribers whose e-mail hashes to the bucket, by e-mail. */
export type SubscriberBucket = Record<string, Subscriber>;

export class LowdbSubscriberList implements SubscriberListRepository {
  readonly #buckets: BucketSet<SubscriberBucket>;
  /** Lookups by a token go through its SHA-256, so how long a lookup takes says nothing about stored tokens. */
  readonly #byTokenHash = new Map<string, Subscriber>();
  readonly #byConfirmHash = new Map<string, Subscriber>();
  readonly #byEmail = new Map<string, Subscriber>();
  /** A briefing run looks every recipient up again before sending: by id, not by a scan. */
  readonly #byId = new Map<string, Subscriber>();

  constructor(buckets: BucketSet<SubscriberBucket>) {
    this.#buckets = buckets;
    for (const [, bucket] of buckets.entries()) for (const subscriber of Object.values(bucket)) this.#index(subscriber);
    // A bucket whose write failed (a full disk) is back as its file has it: so are its subscribers here.
    buckets.onRevert((_bucket, before, after) => {
      for (const email of new Set([...Object.keys(before), ...Object.keys(after)])) {
        const current = this.#byEmail.get(email);
        if (current) this.#unindex(current);
        const stored = after[email];
        if (stored) this.#index(stored);
      }
    });
  }

  #write(subscriber: Subscriber): Promise<void> {
    return this.#buckets.write(bucketOf('subscribers', subscriber.email));
  }

  /** Every subscriber, newest sign-up first (the dashboard's order). */
  #all(): Subscriber[] {
    return [...this.#byId.values()].sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  }

  #index(subscriber: Subscriber): void {
    this.#byId.set(subscriber.id, subscriber);
    this.#byEmail.set(subscriber.email, subscriber);
    this.#byTokenHash.set(hashToken(subscriber.token), subscriber);
    if (subscriber.confirmTokenHash) this.#byConfirmHash.set(subscriber.confirmTokenHash, subscriber);
  }

  #unindex(subscriber: Subscriber): void {
    this.#byId.delete(subscriber.id);
    this.#byEmail.delete(subscriber.email);
    this.#byTokenHash.delete(hashToken(subscriber.token));
    if (subscriber.confirmTokenHash) this.#byConfirmHash.delete(subscriber.confirmTokenHash);
  }

  async getByEmail(email: string) {
    const found = this.#byEmail.get(email);
    return found && { ...found };
  }

  async getByToken(token: string) {
    const found = this.#byTokenHash.get(hashToken(token));
    return found && isSameSecret(found.token, token) ? { ...found } : undefined;
  }

  async get(id: string) {
    const found = this.#byId.get(id);
    return found && { ...found };
  }

  async getByConfirmTokenHash(hash: string) {
    const found = this.#byConfirmHash.get(hash);
    return found && found.confirmTokenHash && isSameSecret(found.confirmTokenHash, hash) ? { ...found } : undefined;
  }

  async upsert(subscriber: Subscriber) {
    const existing = this.#byEmail.get(subscriber.email);
    if (existing) {
      if (existing.unsubscribedAt) {
        delete existing.unsubscribedAt;
        await this.#write(existing);
      }
      return { ...existing };
    }
    const stored = { ...subscriber };
    this.#buckets.get(bucketOf('subscribers', stored.email))[stored.email] = stored;
    this.#index(stored);
    await this.#write(stored);
    return { ...stored };
  }

  async update(id: string, change: Partial<Omit<Subscriber, 'id' | 'email'>>) {
    const existing = this.#byId.get(id);
    if (!existing) return undefined;
    this.#unindex(existing);
    for (const [key, value] of Object.entries(change) as [keyof Subscriber, string | undefined][]) {
      if (value === undefined) delete existing[key];
      else (existing as Record<string, string>)[key] = value;
    }
    this.#index(existing);
    await this.#write(existing);
    return { ...existing };
  }

  async unsubscribe(token: string, at: string) {
    const found = this.#byTokenHash.get(hashToken(token));
    if (!found || !isSameSecret(found.token, token)) return undefined;
    if (!found.unsubscribedAt) {
      found.unsubscribedAt = at;
      await this.#write(found);
    }
    return { ...found };
  }

  async count() {
    let active = 0;
    for (const subscriber of this.#byId.values()) if (!subscriber.unsubscribedAt) active++;
    return active;
  }

  async listFiltered(filter: SubscriberFilter, page: Page) {
    const q = filter.q?.toLowerCase();
    const matching = this.#all().filter((s) => (!q || s.email.includes(q)) && (!filter.status || subscriberStatus(s) === filter.status));
    const items = matching.slice(page.offset, page.offset + page.limit).map((s) => ({ ...s }));
    return { items, total: matching.length };
  }

  async countByStatus() {
    const counts: SubscriberCounts = { confirmed: 0, pending: 0, unsubscribed: 0 };
    for (const subscriber of this.#byId.values()) counts[subscriberStatus(subscriber)]++;
    return counts;
  }

  async listConfirmed() {
    return [...this.#byId.values()].filter((s) => subscriberStatus(s) === 'confirmed').map((s) => ({ ...s }));
  }

  async delete(id: string) {
    const existing = this.#byId.get(id);
    if (!existing) return false;
    this.#unindex(existing);
    delete this.#buckets.get(bucketOf('subscribers', existing.email))[existing.email];
    await this.#write(existing);
    return true;
  }

  async settle(): Promise<void> {
    await this.#buckets.settle();
  }
}
