/** One JSON collection file under DATA_DIR: read once, kept in memory, written atomically (temp file + rename). */
import { Low } from 'lowdb';
import { DataFile } from 'lowdb/node';

export class JsonCollection<T> {
  readonly #db: Low<T>;
  readonly #readOnly: boolean;

  private constructor(db: Low<T>, readOnly: boolean) {
    this.#db = db;
    this.#readOnly = readOnly;
  }

  /**
   * Opens a collection file. lowdb's JSONFilePreset is avoided on purpose: it swaps in a memory
   * adapter when NODE_ENV=test, and the tests must exercise real files.
   */
  static async open<T>(file: string, defaults: T, readOnly: boolean): Promise<JsonCollection<T>> {
    const adapter = new DataFile<T>(file, {
      parse: (text) => JSON.parse(text) as T,
      stringify: (data) => JSON.stringify(data),
    });
    const db = new Low<T>(adapter, defaults);
    try {
      await db.read();
    } catch (error) {
      throw new Error(`Cannot read ${file}: it is not valid JSON (${(error as Error).message})`, { cause: error });
    }
    return new JsonCollection(db, readOnly);
  }

  get data(): T {
    return this.#db.data;
  }

  /** Persists the current data. Concurrent calls are coalesced by steno into the latest state. */
  async write(): Promise<void> {
    if (this.#readOnly) throw new Error('The store was opened read-only');
    await this.#db.write();
  }
}
