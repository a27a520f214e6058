/** Rate-limit windows and throttles held in this process's memory, for a store owned by one process. */
import type { LimitRepository } from './types.ts';

/**
 * Rate-limit windows and throttles, in memory: the lowdb store is owned by one process (its lock),
 * so a restart forgetting open windows is the only loss. A shared store (PostgreSQL) keeps them in a table.
 */
export class MemoryLimits implements LimitRepository {
  readonly #entries = new Map<string, { value: unknown; expiresAt: number }>();
  #lastSweep = 0;

  #sweep(now: number): void {
    if (now - this.#lastSweep < 60_000) return;
    this.#lastSweep = now;
    for (const [key, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(key);
  }

  async hit(key: string, windowMs: number, now: number) {
    this.#sweep(now);
    const entry = this.#entries.get(key);
    if (!entry || entry.expiresAt <= now) {
      this.#entries.set(key, { value: 1, expiresAt: now + windowMs });
      return { count: 1, resetAt: now + windowMs };
    }
    entry.value = (entry.value as number) + 1;
    return { count: entry.value as number, resetAt: entry.expiresAt };
  }
  async get<T>(key: string, now: number) {
    const entry = this.#entries.get(key);
    if (!entry || entry.expiresAt <= now) return undefined;
    return entry.value as T;
  }
  async set<T>(key: string, value: T, expiresAt: number) {
    this.#entries.set(key, { value, expiresAt });
  }
  async delete(key: string) {
    this.#entries.delete(key);
  }
  /** No await between the read and the write: one step in this process. */
  async update<T>(key: string, now: number, change: (current: T | undefined) => { value: T; expiresAt: number }) {
    const entry = this.#entries.get(key);
    const next = change(entry && entry.expiresAt > now ? (entry.value as T) : undefined);
    this.#entries.set(key, next);
    return next.value;
  }
}
