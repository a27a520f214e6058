/** Page views over time in lowdb: one small JSON file per bucket (`analytics/<grain>/<start>.json`) holding `{ dim: { key: views } }`. */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { VIEW_DIMENSIONS, VIEW_GRAINS, type ViewCount, type ViewDimension, type ViewGrain } from '../../schemas/analytics.ts';
import { PartlyStoredError, type AnalyticsRepository } from '../types.ts';
import { readJsonFile, writeFileAtomic } from './file.ts';
import { gated } from './write-gate.ts';

type BucketFile = Partial<Record<ViewDimension, Record<string, number>>>;

/** Buckets kept decoded: the current minute, hour and day and what the dashboard read last. */
const CACHED_FILES = 64;

/** `2026-11-27T22:00Z` <-> `2026-11-27T22-00Z` (no colon in a file name). */
function fileNameOf(start: string): string {
  return `${start.replaceAll(':', '-')}.json`;
}
function startOf(fileName: string): string {
  return fileName.slice(0, -'.json'.length).replace(/T(\d\d)-(\d\d)Z$/, 'T$1:$2Z');
}

export class LowdbAnalytics implements AnalyticsRepository {
  readonly #root: string;
  readonly #readOnly: boolean;
  /** The buckets on disk, by grain: listing a range needs no directory read. */
  readonly #starts = new Map<ViewGrain, Set<string>>();
  readonly #cache = new Map<string, BucketFile>();
  /** One change at a time per file (read, add, write), so two flushes never lose each other's counts. */
  readonly #chains = new Map<string, Promise<unknown>>();

  constructor(dataDir: string, readOnly: boolean) {
    this.#root = path.join(dataDir, 'analytics');
    this.#readOnly = readOnly;
    for (const grain of VIEW_GRAINS) {
      let names: string[] = [];
      try {
        names = fs.readdirSync(path.join(this.#root, grain)).filter((name) => name.endsWith('.json') && !name.startsWith('.'));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
      this.#starts.set(grain, new Set(names.map(startOf)));
    }
  }

  #file(grain: ViewGrain, start: string): string {
    return path.join(this.#root, grain, fileNameOf(start));
  }

  #serial<T>(file: string, work: () => Promise<T>): Promise<T> {
    const next = (this.#chains.get(file) ?? Promise.resolve()).then(work, work);
    const settled = next.catch(() => {});
    this.#chains.set(file, settled);
    void settled.then(() => {
      if (this.#chains.get(file) === settled) this.#chains.delete(file);
    });
    return next;
  }

  async #load(file: string): Promise<BucketFile> {
    const cached = this.#cache.get(file);
    if (cached) {
      this.#cache.delete(file);
      this.#cache.set(file, cached);
      return cached;
    }
    const data = (await readJsonFile<BucketFile>(file)) ?? {};
    this.#cache.set(file, data);
    if (this.#cache.size > CACHED_FILES) this.#cache.delete(this.#cache.keys().next().value!);
    return data;
  }

  async addViews(counts: readonly ViewCount[]) {
    if (this.#readOnly) throw new Error('The store is open read-only');
    const byFile = new Map<string, { grain: ViewGrain; start: string; counts: ViewCount[] }>();
    for (const count of counts) {
      const file = this.#file(count.grain, count.start);
      let group = byFile.get(file);
      if (!group) byFile.set(file, (group = { grain: count.grain, start: count.start, counts: [] }));
      group.counts.push(count);
    }
    const groups = [...byFile.values()];
    const results = await Promise.allSettled(
      [...byFile].map(([file, group]) =>
        this.#serial(file, async () => {
          // A copy: a failed write leaves the cached bucket as its file holds it.
          const data = structuredClone(await this.#load(file));
          for (const { dim, key, views } of group.counts) {
            const keys = (data[dim] ??= {});
            keys[key] = (keys[key] ?? 0) + views;
          }
          await writeFileAtomic(file, JSON.stringify(data));
          this.#cache.set(file, data);
          this.#starts.get(group.grain)!.add(group.start);
        }),
      ),
    );
    // Files are written one by one: those stored must not be added again when the caller retries.
    const failed = results.flatMap((result, i) => (result.status === 'rejected' ? [{ result, counts: groups[i]!.counts }] : []));
    if (failed.length > 0)
      throw new PartlyStoredError(
        failed.flatMap((f) => f.counts),
        failed[0]!.result.reason,
      );
  }

  async listViews(grain: ViewGrain, dim: ViewDimension, from: string, to: string, keys?: readonly string[]) {
    const wanted = keys ? new Set(keys) : undefined;
    const starts = [...this.#starts.get(grain)!].filter((start) => start >= from && start < to).sort();
    const out: ViewCount[] = [];
    for (const start of starts) {
      const file = this.#file(grain, start);
      const data = await this.#serial(file, () => this.#load(file));
      for (const [key, views] of Object.entries(data[dim] ?? {}))
        if (!wanted || wanted.has(key)) out.push({ grain, start, dim, key, views });
    }
    return out;
  }

  async prune(grain: ViewGrain, before: string) {
    const starts = [...this.#starts.get(grain)!].filter((start) => start < before);
    await Promise.all(
      starts.map((start) => {
        const file = this.#file(grain, start);
        return this.#serial(file, async () => {
          await gated(file, () => fsp.rm(file, { force: true }));
          this.#cache.delete(file);
          this.#starts.get(grain)!.delete(start);
        });
      }),
    );
    return starts.length;
  }

  async exportAll() {
    const out: ViewCount[] = [];
    for (const grain of VIEW_GRAINS) for (const dim of VIEW_DIMENSIONS) out.push(...(await this.listViews(grain, dim, '', '\uffff')));
    return out;
  }

  /** Waits for every write under way. */
  async settle(): Promise<void> {
    await Promise.all([...this.#chains.values()]);
  }
}
