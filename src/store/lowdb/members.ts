/**
 * The lowdb member repository (issue 48): members in hashed bucket files by id (members/<bucket>.json), so
 * a sign-in or a webhook rewrites one small file; in memory, indexes by id, e-mail and Stripe customer.
 */
import { matchesMemberFilter, type Member, type MemberFilter } from '../../schemas/member.ts';
import type { MemberRepository, Page } from '../types.ts';
import { bucketOf, type BucketSet } from './layout.ts';

/** members/<bucket>.json: the members whose id hashes to the bucket, by id. */
export type MemberBucket = Record<string, Member>;

/** A copy a caller may change without touching the stored record (history is an array of objects). */
function copyOf(member: Member): Member {
  return structuredClone(member);
}

/** Newest sign-up first, then by id (a stable order for paging). */
function newestFirst(a: Member, b: Member): number {
  return a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

export class LowdbMembers implements MemberRepository {
  readonly #buckets: BucketSet<MemberBucket>;
  readonly #byId = new Map<string, Member>();
  readonly #byEmail = new Map<string, Member>();
  readonly #byCustomer = new Map<string, Member>();

  constructor(buckets: BucketSet<MemberBucket>) {
    this.#buckets = buckets;
    for (const [, bucket] of buckets.entries()) for (const member of Object.values(bucket)) this.#index(member);
    // A bucket whose write failed (a full disk) is back as its file has it: so are its members here.
    buckets.onRevert((_bucket, before, after) => {
      for (const id of new Set([...Object.keys(before), ...Object.keys(after)])) {
        const current = this.#byId.get(id);
        if (current) this.#unindex(current);
        const stored = after[id];
        if (stored) this.#index(stored);
      }
    });
  }

  #index(member: Member): void {
    this.#byId.set(member.id, member);
    this.#byEmail.set(member.email, member);
    if (member.stripeCustomerId) this.#byCustomer.set(member.stripeCustomerId, member);
  }

  #unindex(member: Member): void {
    this.#byId.delete(member.id);
    if (this.#byEmail.get(member.email) === member) this.#byEmail.delete(member.email);
    const customer = member.stripeCustomerId;
    if (customer && this.#byCustomer.get(customer) === member) this.#byCustomer.delete(customer);
  }

  #store(member: Member): Promise<void> {
    const b = bucketOf('members', member.id);
    this.#buckets.get(b)[member.id] = member;
    return this.#buckets.write(b);
  }

  async get(id: string) {
    const found = this.#byId.get(id);
    return found && copyOf(found);
  }

  async getByEmail(email: string) {
    const found = this.#byEmail.get(email.toLowerCase());
    return found && copyOf(found);
  }

  async getByStripeCustomer(customerId: string) {
    const found = this.#byCustomer.get(customerId);
    return found && copyOf(found);
  }

  async insert(member: Member) {
    if (this.#byEmail.has(member.email) || this.#byId.has(member.id)) return false;
    const stored = copyOf(member);
    this.#index(stored);
    await this.#store(stored);
    return true;
  }

  async mutate(id: string, change: (member: Member) => Member | undefined) {
    const current = this.#byId.get(id);
    if (!current) return undefined;
    // No await between the read and the index update: in one process that makes the change one step.
    const next = change(copyOf(current));
    if (!next) return copyOf(current);
    const stored = copyOf({ ...next, id: current.id });
    if (stored.email !== current.email && this.#byEmail.has(stored.email)) throw new Error('Another member has this e-mail address');
    this.#unindex(current);
    this.#index(stored);
    await this.#store(stored);
    return copyOf(stored);
  }

  async delete(id: string) {
    const existing = this.#byId.get(id);
    if (!existing) return false;
    this.#unindex(existing);
    const b = bucketOf('members', id);
    delete this.#buckets.get(b)[id];
    await this.#buckets.write(b);
    return true;
  }

  async list(filter: MemberFilter, page: Page, now: number) {
    const matching = [...this.#byId.values()].filter((m) => matchesMemberFilter(m, filter, now)).sort(newestFirst);
    return { items: matching.slice(page.offset, page.offset + page.limit).map(copyOf), total: matching.length };
  }

  async all() {
    return [...this.#byId.values()].sort((a, b) => -newestFirst(a, b)).map(copyOf);
  }

  async count() {
    return this.#byId.size;
  }

  async settle(): Promise<void> {
    await this.#buckets.settle();
  }
}
