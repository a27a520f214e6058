/**
 * Live coverage as small files, live/{shard}/{articleId}.json: one file per live article holding its
 * coverage state and its updates, held in memory (few articles ever go live, and a page render asks
 * every article whether it is one).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { LiveCoverage, LiveUpdate } from '../../schemas/live.ts';
import type { LiveRepository } from '../types.ts';
import { fileKey, listNames, readJson, shardOf, writeJsonAtomic } from './small-files.ts';
import { gated } from './write-gate.ts';

type LiveFile = { articleId: string; coverage?: LiveCoverage; updates: LiveUpdate[] };

/** Newest first: createdAt, then id, as the PostgreSQL store orders them. */
function byNewest(a: LiveUpdate, b: LiveUpdate): number {
  return a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

export class LowdbLive implements LiveRepository {
  readonly #root: string;
  readonly #readOnly: boolean;
  readonly #files = new Map<string, LiveFile>();
  /** Each article's writes in order: a change is applied to the file the previous one wrote. */
  readonly #queues = new Map<string, Promise<unknown>>();

  private constructor(root: string, readOnly: boolean) {
    this.#root = root;
    this.#readOnly = readOnly;
  }

  /** Opens the folder and reads every live article's file; a half-written temp file is ignored. */
  static async open(dataDir: string, readOnly: boolean): Promise<LowdbLive> {
    const live = new LowdbLive(path.join(dataDir, 'live'), readOnly);
    for (const shard of await listNames(live.#root)) {
      for (const name of await listNames(path.join(live.#root, shard))) {
        if (!name.endsWith('.json')) continue;
        const file = await readJson<LiveFile>(path.join(live.#root, shard, name));
        if (file?.articleId) live.#files.set(file.articleId, { ...file, updates: [...(file.updates ?? [])].sort(byNewest) });
      }
    }
    return live;
  }

  #path(articleId: string): string {
    return path.join(this.#root, shardOf(articleId), `${fileKey(articleId)}.json`);
  }

  /** Applies `change` to the article's file and writes it whole (it holds one article's updates, never the archive's). */
  #change<T>(articleId: string, change: (file: LiveFile) => { file: LiveFile | undefined; result: T }): Promise<T> {
    if (this.#readOnly) return Promise.reject(new Error('The store was opened read-only'));
    const previous = this.#queues.get(articleId) ?? Promise.resolve();
    const next = previous
      .catch(() => {})
      .then(async () => {
        const current = this.#files.get(articleId) ?? { articleId, updates: [] };
        const { file, result } = change({ ...current, updates: [...current.updates] });
        const target = this.#path(articleId);
        if (file === undefined || (file.coverage === undefined && file.updates.length === 0)) {
          await gated(target, () => fs.promises.rm(target, { force: true }));
          this.#files.delete(articleId);
        } else {
          file.updates.sort(byNewest);
          await writeJsonAtomic(target, file);
          this.#files.set(articleId, file);
        }
        return result;
      });
    this.#queues.set(articleId, next);
    // The caller gets the failure; this cleanup must not raise it a second time.
    const forget = () => {
      if (this.#queues.get(articleId) === next) this.#queues.delete(articleId);
    };
    next.then(forget, forget);
    return next;
  }

  async getCoverage(articleId: string) {
    return this.#files.get(articleId)?.coverage;
  }

  async putCoverage(coverage: LiveCoverage) {
    await this.#change(coverage.articleId, (file) => ({ file: { ...file, coverage }, result: undefined }));
  }

  async listCoverage() {
    const all: LiveCoverage[] = [];
    for (const file of this.#files.values()) if (file.coverage) all.push(file.coverage);
    return all.sort((a, b) => (a.startedAt < b.startedAt ? -1 : a.startedAt > b.startedAt ? 1 : 0));
  }

  async listUpdates(articleId: string) {
    return [...(this.#files.get(articleId)?.updates ?? [])];
  }

  async getUpdate(articleId: string, id: string) {
    return this.#files.get(articleId)?.updates.find((u) => u.id === id);
  }

  async putUpdate(update: LiveUpdate) {
    await this.#change(update.articleId, (file) => ({
      file: { ...file, updates: [...file.updates.filter((u) => u.id !== update.id), update] },
      result: undefined,
    }));
  }

  async deleteUpdate(articleId: string, id: string) {
    if (!this.#files.get(articleId)?.updates.some((u) => u.id === id)) return false;
    return this.#change(articleId, (file) => {
      const updates = file.updates.filter((u) => u.id !== id);
      return { file: { ...file, updates }, result: updates.length !== file.updates.length };
    });
  }

  async deleteForArticle(articleId: string) {
    if (!this.#files.has(articleId)) return;
    await this.#change(articleId, () => ({ file: undefined, result: undefined }));
  }

  /** Waits for the writes in flight (a clean close). */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.#queues.values()]);
  }
}
