/** Article revisions as small files: revisions/{shard}/{articleId}/{rev}.json, read on demand (only the editor asks). */
import fs from 'node:fs';
import path from 'node:path';
import type { Revision } from '../../schemas/revision.ts';
import type { RevisionRepository } from '../types.ts';
import { fileKey, listNames, readJson, shardOf, writeJsonAtomic } from './small-files.ts';
import { gated } from './write-gate.ts';

export class LowdbRevisions implements RevisionRepository {
  readonly #root: string;
  readonly #readOnly: boolean;
  /** Writes per article run one after another, so a coalesced autosave never lands before the save it follows. */
  readonly #tails = new Map<string, Promise<void>>();

  constructor(dataDir: string, readOnly: boolean) {
    this.#root = path.join(dataDir, 'revisions');
    this.#readOnly = readOnly;
  }

  #dir(articleId: string): string {
    return path.join(this.#root, shardOf(articleId), fileKey(articleId));
  }

  #file(articleId: string, rev: number): string {
    return path.join(this.#dir(articleId), `${String(rev).padStart(9, '0')}.json`);
  }

  /** Revision file names of an article, newest first (zero-padded, so names sort by number). */
  async #names(articleId: string): Promise<string[]> {
    await this.#tails.get(articleId)?.catch(() => {});
    return (await listNames(this.#dir(articleId)))
      .filter((n) => /^\d+\.json$/.test(n))
      .sort()
      .reverse();
  }

  async latest(articleId: string): Promise<Revision | undefined> {
    const [newest] = await this.#names(articleId);
    return newest ? readJson<Revision>(path.join(this.#dir(articleId), newest)) : undefined;
  }

  async list(articleId: string): Promise<Revision[]> {
    const names = await this.#names(articleId);
    const out: Revision[] = [];
    for (const name of names) {
      const revision = await readJson<Revision>(path.join(this.#dir(articleId), name));
      if (revision) out.push(revision);
    }
    return out;
  }

  async get(articleId: string, rev: number): Promise<Revision | undefined> {
    await this.#tails.get(articleId)?.catch(() => {});
    return readJson<Revision>(this.#file(articleId, rev));
  }

  save(revision: Revision): Promise<void> {
    if (this.#readOnly) return Promise.reject(new Error('The store was opened read-only'));
    const previous = this.#tails.get(revision.articleId) ?? Promise.resolve();
    const next = previous.catch(() => {}).then(() => writeJsonAtomic(this.#file(revision.articleId, revision.rev), revision));
    this.#tails.set(revision.articleId, next);
    void next.finally(() => this.#tails.get(revision.articleId) === next && this.#tails.delete(revision.articleId)).catch(() => {});
    return next;
  }

  async deleteForArticle(articleId: string): Promise<void> {
    if (this.#readOnly) throw new Error('The store was opened read-only');
    await this.#tails.get(articleId)?.catch(() => {});
    const dir = this.#dir(articleId);
    await gated(dir, () => fs.promises.rm(dir, { recursive: true, force: true }));
  }
}
