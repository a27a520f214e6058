/** The regeneration queue: jobs bucketed by path, kept in memory in queue order. */
import type { Job } from '../../schemas/misc.ts';
import type { JobRepository } from '../types.ts';
import { bucketOf, type BucketSet } from './layout.ts';

/** The layout-1 jobs.json (read by the migration). */
export type JobsFile = { jobs: Job[]; seq: number };
/** jobs/<bucket>.json: queued jobs by path, each with its place in the queue. */
export type JobBucket = Record<string, { job: Job; order: number }>;

/** The regeneration queue: jobs bucketed by path, kept in memory in queue order (a Map's insertion order). */
export class LowdbJobs implements JobRepository {
  readonly #buckets: BucketSet<JobBucket>;
  /** Queue order: re-inserting a key moves it to the back. */
  readonly #queue = new Map<string, { job: Job; order: number }>();
  readonly #byId = new Map<string, { job: Job; order: number }>();
  #seq = 0;

  constructor(buckets: BucketSet<JobBucket>) {
    this.#buckets = buckets;
    const entries: { job: Job; order: number }[] = [];
    for (const [, bucket] of buckets.entries()) entries.push(...Object.values(bucket));
    entries.sort((a, b) => a.order - b.order);
    for (const entry of entries) {
      this.#queue.set(entry.job.path, entry);
      this.#byId.set(entry.job.id, entry);
      this.#seq = Math.max(this.#seq, entry.order, Number(entry.job.id) || 0);
    }
  }
  async enqueue(paths: readonly string[], now: string) {
    let added = 0;
    const touched = new Set<number>();
    for (const path of new Set(paths)) {
      touched.add(bucketOf('jobs', path));
      const existing = this.#queue.get(path);
      if (existing) {
        existing.job.queuedAt = now;
        continue;
      }
      const order = ++this.#seq;
      const entry = { job: { id: String(order), path, createdAt: now, queuedAt: now, attempts: 0 } as Job, order };
      this.#queue.set(path, entry);
      this.#byId.set(entry.job.id, entry);
      this.#buckets.get(bucketOf('jobs', path))[path] = entry;
      added++;
    }
    await Promise.all([...touched].map((b) => this.#buckets.write(b)));
    return added;
  }
  async list(limit: number) {
    const out: Job[] = [];
    for (const { job } of this.#queue.values()) {
      if (out.length >= limit) break;
      out.push({ ...job });
    }
    return out;
  }
  async complete(id: string, startedAt: string) {
    const entry = this.#byId.get(id);
    if (!entry) return;
    const b = bucketOf('jobs', entry.job.path);
    if (entry.job.queuedAt > startedAt) {
      // Re-queued while it was rendering: keep it so the newest data is rendered too.
      entry.job.attempts = 0;
    } else {
      this.#queue.delete(entry.job.path);
      this.#byId.delete(id);
      delete this.#buckets.get(b)[entry.job.path];
    }
    await this.#buckets.write(b);
  }
  async fail(id: string, error: string) {
    const entry = this.#byId.get(id);
    if (!entry) return;
    entry.job.attempts++;
    entry.job.lastError = error;
    // Move it to the back so one broken page does not block the others.
    entry.order = ++this.#seq;
    this.#queue.delete(entry.job.path);
    this.#queue.set(entry.job.path, entry);
    await this.#buckets.write(bucketOf('jobs', entry.job.path));
  }
  async get(id: string) {
    const entry = this.#byId.get(id);
    return entry && { ...entry.job };
  }
  async failed(limit: number) {
    const out: Job[] = [];
    for (const { job } of this.#queue.values()) {
      if (out.length >= limit) break;
      if (job.attempts > 0) out.push({ ...job });
    }
    return out;
  }
  async size() {
    return this.#queue.size;
  }
  /** One process owns the folder (its lock file): the claim is always its own. */
  async claim(id: string) {
    return this.#byId.has(id);
  }
  async settle(): Promise<void> {
    await this.#buckets.settle();
  }
}
