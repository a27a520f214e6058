/** Sessions in hashed buckets by id (the token's SHA-256). */
import type { Session } from '../../schemas/auth.ts';
import type { SessionRepository } from '../types.ts';
import { bucketOf, type BucketSet } from './layout.ts';

/** The layout-1 sessions.json (read by the migration). */
export type SessionsFile = { sessions: Record<string, Session> };
/** sessions/<bucket>.json: sessions by id (the token's SHA-256), bucketed by id. */
export type SessionBucket = Record<string, Session>;

export class LowdbSessions implements SessionRepository {
  readonly #buckets: BucketSet<SessionBucket>;
  readonly #byId = new Map<string, Session>();

  constructor(buckets: BucketSet<SessionBucket>) {
    this.#buckets = buckets;
    for (const [, bucket] of buckets.entries()) for (const session of Object.values(bucket)) this.#byId.set(session.id, session);
    // A bucket whose write failed (a full disk) is back as its file has it: so are its sessions here.
    buckets.onRevert((_bucket, before, after) => {
      for (const id of new Set([...Object.keys(before), ...Object.keys(after)])) {
        const stored = after[id];
        if (stored) this.#byId.set(id, stored);
        else this.#byId.delete(id);
      }
    });
  }
  #drop(id: string): number {
    const b = bucketOf('sessions', id);
    this.#byId.delete(id);
    delete this.#buckets.get(b)[id];
    return b;
  }
  async get(id: string) {
    const session = this.#byId.get(id);
    return session && { ...session };
  }
  async insert(session: Session) {
    const b = bucketOf('sessions', session.id);
    const stored = { ...session };
    this.#byId.set(stored.id, stored);
    this.#buckets.get(b)[stored.id] = stored;
    await this.#buckets.write(b);
  }
  async setExpiry(id: string, expiresAt: string) {
    const session = this.#byId.get(id);
    if (!session) return;
    session.expiresAt = expiresAt;
    await this.#buckets.write(bucketOf('sessions', id));
  }
  async delete(id: string) {
    if (!this.#byId.has(id)) return;
    await this.#buckets.write(this.#drop(id));
  }
  async #dropWhere(test: (session: Session) => boolean): Promise<number> {
    const touched = new Set<number>();
    let removed = 0;
    for (const session of [...this.#byId.values()]) {
      if (!test(session)) continue;
      touched.add(this.#drop(session.id));
      removed++;
    }
    await Promise.all([...touched].map((b) => this.#buckets.write(b)));
    return removed;
  }
  async deleteForUser(userId: string) {
    await this.#dropWhere((s) => s.userId === userId);
  }
  async deleteExpired(now: string) {
    return this.#dropWhere((s) => s.expiresAt <= now);
  }
  async settle(): Promise<void> {
    await this.#buckets.settle();
  }
}
