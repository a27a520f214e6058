/** Trashed articles as small files, trash/{shard}/{articleId}.json, indexed in memory (the trash holds 30 days at most). */
import fs from 'node:fs';
import path from 'node:path';
import type { TrashEntry } from '../../schemas/revision.ts';
import type { TrashRepository } from '../types.ts';
import { fileKey, readJson, shardOf, writeJsonAtomic } from './small-files.ts';
import { gated } from './write-gate.ts';

export class LowdbTrash implements TrashRepository {
  readonly #root: string;
  readonly #readOnly: boolean;
  readonly #byId = new Map<string, TrashEntry>();
  readonly #slugs = new Map<string, string>();

  private constructor(root: string, readOnly: boolean) {
    this.#root = root;
    this.#readOnly = readOnly;
  }

  /** Opens the trash and reads every entry into memory; a half-written temp file is ignored. */
  static async open(dataDir: string, readOnly: boolean): Promise<LowdbTrash> {
    const trash = new LowdbTrash(path.join(dataDir, 'trash'), readOnly);
    let shards: string[] = [];
    try {
      shards = await fs.promises.readdir(trash.#root);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    for (const shard of shards) {
      for (const name of await fs.promises.readdir(path.join(trash.#root, shard))) {
        if (!name.endsWith('.json')) continue;
        const entry = await readJson<TrashEntry>(path.join(trash.#root, shard, name));
        if (entry) trash.#remember(entry);
      }
    }
    return trash;
  }

  #file(articleId: string): string {
    return path.join(this.#root, shardOf(articleId), `${fileKey(articleId)}.json`);
  }

  #remember(entry: TrashEntry): void {
    this.#byId.set(entry.article.id, entry);
    this.#slugs.set(entry.article.slug, entry.article.id);
  }

  async get(articleId: string) {
    return this.#byId.get(articleId);
  }

  async list() {
    return [...this.#byId.values()].sort((a, b) => (a.deletedAt < b.deletedAt ? 1 : a.deletedAt > b.deletedAt ? -1 : 0));
  }

  async put(entry: TrashEntry) {
    if (this.#readOnly) throw new Error('The store was opened read-only');
    await writeJsonAtomic(this.#file(entry.article.id), entry);
    this.#remember(entry);
  }

  async delete(articleId: string) {
    if (this.#readOnly) throw new Error('The store was opened read-only');
    const entry = this.#byId.get(articleId);
    if (!entry) return false;
    const file = this.#file(articleId);
    await gated(file, () => fs.promises.rm(file, { force: true }));
    this.#byId.delete(articleId);
    if (this.#slugs.get(entry.article.slug) === articleId) this.#slugs.delete(entry.article.slug);
    return true;
  }

  async slugExists(slug: string) {
    return this.#slugs.has(slug);
  }
}
