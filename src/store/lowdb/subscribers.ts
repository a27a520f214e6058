/** The lowdb subscriber repository: the subscribers file, with in-memory indexes by e-mail and by token hash. */
import { createHash, timingSafeEqual } from 'node:crypto';
import { subscriberStatus, type Subscriber, type SubscriberCounts, type SubscriberFilter } from '../../schemas/newsletter.ts';
import type { Page, SubscriberListRepository } from '../types.ts';
import type { JsonCollection } from './file.ts';

export type SubscribersFile = { subscribers: Subscriber[] };

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Constant-time equality of two strings (false on different lengths, which are not secret here). */
function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export class LowdbSubscriberList implements SubscriberListRepository {
  readonly #file: JsonCollection<SubscribersFile>;
  /** Lookups by a token go through its SHA-256, so how long a lookup takes says nothing about stored tokens. */
  readonly #byTokenHash = new Map<string, Subscriber>();
  readonly #byConfirmHash = new Map<string, Subscriber>();
  readonly #byEmail = new Map<string, Subscriber>();
  /** A briefing run looks every recipient up again before sending: by id, not by a scan. */
  readonly #byId = new Map<string, Subscriber>();

  constructor(file: JsonCollection<SubscribersFile>) {
    this.#file = file;
    for (const subscriber of file.data.subscribers) this.#index(subscriber);
  }

  #index(subscriber: Subscriber): void {
    this.#byId.set(subscriber.id, subscriber);
    this.#byEmail.set(subscriber.email, subscriber);
    this.#byTokenHash.set(sha256(subscriber.token), subscriber);
    if (subscriber.confirmTokenHash) this.#byConfirmHash.set(subscriber.confirmTokenHash, subscriber);
  }

  #unindex(subscriber: Subscriber): void {
    this.#byId.delete(subscriber.id);
    this.#byEmail.delete(subscriber.email);
    this.#byTokenHash.delete(sha256(subscriber.token));
    if (subscriber.confirmTokenHash) this.#byConfirmHash.delete(subscriber.confirmTokenHash);
  }

  async getByEmail(email: string) {
    const found = this.#byEmail.get(email);
    return found && { ...found };
  }

  async getByToken(token: string) {
    const found = this.#byTokenHash.get(sha256(token));
    return found && sameSecret(found.token, token) ? { ...found } : undefined;
  }

  async get(id: string) {
    const found = this.#byId.get(id);
    return found && { ...found };
  }

  async getByConfirmTokenHash(hash: string) {
    const found = this.#byConfirmHash.get(hash);
    return found && found.confirmTokenHash && sameSecret(found.confirmTokenHash, hash) ? { ...found } : undefined;
  }

  async upsert(subscriber: Subscriber) {
    const existing = this.#byEmail.get(subscriber.email);
    if (existing) {
      if (existing.unsubscribedAt) {
        delete existing.unsubscribedAt;
        await this.#file.write();
      }
      return { ...existing };
    }
    const stored = { ...subscriber };
    this.#file.data.subscribers.push(stored);
    this.#index(stored);
    await this.#file.write();
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
    await this.#file.write();
    return { ...existing };
  }

  async unsubscribe(token: string, at: string) {
    const found = this.#byTokenHash.get(sha256(token));
    if (!found || !sameSecret(found.token, token)) return undefined;
    if (!found.unsubscribedAt) {
      found.unsubscribedAt = at;
      await this.#file.write();
    }
    return { ...found };
  }

  async count() {
    return this.#file.data.subscribers.filter((s) => !s.unsubscribedAt).length;
  }

  async listFiltered(filter: SubscriberFilter, page: Page) {
    const q = filter.q?.toLowerCase();
    const matching = this.#file.data.subscribers.filter(
      (s) => (!q || s.email.includes(q)) && (!filter.status || subscriberStatus(s) === filter.status),
    );
    // Stored in sign-up order: newest first is the reverse.
    const items = matching
      .slice()
      .reverse()
      .slice(page.offset, page.offset + page.limit)
      .map((s) => ({ ...s }));
    return { items, total: matching.length };
  }

  async countByStatus() {
    const counts: SubscriberCounts = { confirmed: 0, pending: 0, unsubscribed: 0 };
    for (const subscriber of this.#file.data.subscribers) counts[subscriberStatus(subscriber)]++;
    return counts;
  }

  async listConfirmed() {
    return this.#file.data.subscribers.filter((s) => subscriberStatus(s) === 'confirmed').map((s) => ({ ...s }));
  }

  async delete(id: string) {
    const index = this.#file.data.subscribers.findIndex((s) => s.id === id);
    if (index < 0) return false;
    this.#unindex(this.#file.data.subscribers[index]!);
    this.#file.data.subscribers.splice(index, 1);
    await this.#file.write();
    return true;
  }
}
