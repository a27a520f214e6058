/** Small facts about the store (meta.json): a key-value file. */
import type { MetaRepository } from '../types.ts';
import type { JsonCollection } from './file.ts';

export type MetaFile = Record<string, unknown>;

export class LowdbMeta implements MetaRepository {
  readonly #file: JsonCollection<MetaFile>;
  constructor(file: JsonCollection<MetaFile>) {
    this.#file = file;
  }
  async get<T>(key: string) {
    return this.#file.data[key] as T | undefined;
  }
  async set<T>(key: string, value: T) {
    this.#file.data[key] = value;
    await this.#file.write();
  }
  async setIfAbsent<T>(key: string, value: T) {
    if (this.#file.data[key] !== undefined) return this.#file.data[key] as T;
    this.#file.data[key] = value;
    await this.#file.write();
    return value;
  }
}
