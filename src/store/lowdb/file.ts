/** One JSON collection file under DATA_DIR: read once, kept in memory, written atomically (temp file + rename). */
import { Low } from 'lowdb';
import { DataFile } from 'lowdb/node';

export class JsonCollection<T> {
  readonly #db: Low<T>;
  readonly #readOnly: boolean;
  /** The disk write in progress, and the one queued behind it that will carry every change made meanwhile. */
  #writing: Promise<void> | undefined;
  #queued: Promise<void> | undefined;

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

  /**
   * Persists the current data; resolves once a write that includes it is on disk. Calls made while a
   * write is running share one queued write, so a burst of N changes costs one stringify and one
   * rename, not N (lowdb stringifies the whole document on every call it gets).
   */
  write(): Promise<void> {
    if (this.#readOnly) return Promise.reject(new Error('The store was opened read-only'));
    if (this.#queued) return this.#queued;
    const previous = this.#writing ?? Promise.resolve();
    const next: Promise<void> = previous
      .catch(() => {})
      .then(() => {
        this.#queued = undefined;
        const current = this.#db.write();
        this.#writing = current;
        current.then(
          () => this.#writing === current && (this.#writing = undefined),
          () => this.#writing === current && (this.#writing = undefined),
        );
        return current;
      });
    this.#queued = next;
    return next;
  }
}
