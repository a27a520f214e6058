/** The news sources, in one small file (sources.json). */
import type { NewsSource } from '../../schemas/source.ts';
import type { SourceRepository } from '../types.ts';
import type { JsonCollection } from './file.ts';

export type SourcesFile = { sources: NewsSource[] };

export class LowdbSources implements SourceRepository {
  readonly #file: JsonCollection<SourcesFile>;
  constructor(file: JsonCollection<SourcesFile>) {
    this.#file = file;
  }
  async get(id: string) {
    const found = this.#file.data.sources.find((s) => s.id === id);
    return found && { ...found };
  }
  async list() {
    return this.#file.data.sources.map((s) => ({ ...s }));
  }
  async insert(source: NewsSource) {
    this.#file.data.sources.push({ ...source });
    await this.#file.write();
  }
  async update(id: string, change: Partial<Omit<NewsSource, 'id'>>) {
    const index = this.#file.data.sources.findIndex((s) => s.id === id);
    if (index < 0) return undefined;
    const updated = { ...this.#file.data.sources[index]!, ...change } as NewsSource;
    for (const key of Object.keys(updated) as (keyof NewsSource)[]) if (updated[key] === undefined) delete updated[key];
    this.#file.data.sources[index] = updated;
    await this.#file.write();
    return { ...updated };
  }
  async delete(id: string) {
    const before = this.#file.data.sources.length;
    this.#file.data.sources = this.#file.data.sources.filter((s) => s.id !== id);
    if (before === this.#file.data.sources.length) return false;
    await this.#file.write();
    return true;
  }
}
