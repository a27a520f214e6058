/** One small JSON file under DATA_DIR held by lowdb: read once, kept in memory, written atomically (temp file, fsync, rename). */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Low, type Adapter } from 'lowdb';
import { gated } from './write-gate.ts';

/** Folders already known to exist, so a write does not ask the file system every time. */
const knownDirs = new Set<string>();

/** Writes `text` to `file` so a reader or a crash sees the old or the new content, never a mix. */
export function writeFileAtomic(file: string, text: string): Promise<void> {
  return gated(file, () => writeFileAtomicNow(file, text));
}

async function writeFileAtomicNow(file: string, text: string): Promise<void> {
  const dir = path.dirname(file);
  if (!knownDirs.has(dir)) {
    await fsp.mkdir(dir, { recursive: true });
    knownDirs.add(dir);
  }
  const temp = path.join(dir, `.${path.basename(file)}.tmp`);
  try {
    const handle = await fsp.open(temp, 'w');
    try {
      await handle.writeFile(text, 'utf8');
      // On disk before the rename makes it visible, so a power cut cannot leave an empty file behind.
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await fsp.rename(temp, file);
  } catch (error) {
    // A full disk: the file keeps its previous content, and the partial temp file does not keep the space.
    await fsp.rm(temp, { force: true });
    throw error;
  }
}

/** Reads and parses a JSON file; undefined when it does not exist, an error naming the file when it is not JSON. */
export async function readJsonFile<T>(file: string): Promise<T | undefined> {
  let text: string;
  try {
    text = await fsp.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new Error(`Cannot read ${file}: it is not valid JSON (${(error as Error).message})`, { cause: error });
  }
}

export function readJsonFileSync<T>(file: string): T | undefined {
  if (!fs.existsSync(file)) return undefined;
  const text = fs.readFileSync(file, 'utf8');
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new Error(`Cannot read ${file}: it is not valid JSON (${(error as Error).message})`, { cause: error });
  }
}

/** lowdb adapter for one file: our atomic write (steno's has no fsync), and a readable error on bad JSON. */
class AtomicJsonFile<T> implements Adapter<T> {
  readonly #file: string;
  readonly #stringify: (data: T) => string;
  constructor(file: string, stringify: (data: T) => string = JSON.stringify) {
    this.#file = file;
    this.#stringify = stringify;
  }
  async read(): Promise<T | null> {
    return (await readJsonFile<T>(this.#file)) ?? null;
  }
  async write(data: T): Promise<void> {
    await writeFileAtomic(this.#file, this.#stringify(data));
  }
}

/**
 * What a collection does when a disk write fails (a full disk): its data goes back to what the file
 * holds (`reload`), so memory never shows a change that is not stored, and `onRevert` lets the owner
 * bring its indexes in line. Without it the data keeps the change and the next write carries it.
 */
export type RevertOnFailure<T> = {
  /** The data as the file holds it now (the empty value when there is no file). */
  reload: () => T;
  onRevert?: (before: T, after: T) => void;
};

export class JsonCollection<T> {
  readonly file: string;
  readonly #db: Low<T>;
  readonly #readOnly: boolean;
  readonly #revert: RevertOnFailure<T> | undefined;
  /** Set by remove(): the next disk operation deletes the file instead of writing it. */
  #removed = false;
  /** The disk write in progress, and the one queued behind it that will carry every change made meanwhile. */
  #writing: Promise<void> | undefined;
  #queued: Promise<void> | undefined;

  private constructor(file: string, db: Low<T>, readOnly: boolean, revert: RevertOnFailure<T> | undefined) {
    this.file = file;
    this.#db = db;
    this.#readOnly = readOnly;
    this.#revert = revert;
  }

  /**
   * Opens a file. lowdb's JSONFilePreset is avoided on purpose: it swaps in a memory adapter when
   * NODE_ENV=test, and the tests must exercise real files.
   */
  static async open<T>(file: string, defaults: T, readOnly: boolean): Promise<JsonCollection<T>> {
    const empty = structuredClone(defaults);
    const db = new Low<T>(new AtomicJsonFile<T>(file), defaults);
    await db.read();
    return new JsonCollection(file, db, readOnly, { reload: () => readJsonFileSync<T>(file) ?? structuredClone(empty) });
  }

  /**
   * Wraps data already read (or new): the bulk loader reads thousands of files through a pool itself.
   * `stringify` writes data that is not plain JSON values (the vote buckets' lazily decoded lists).
   */
  static of<T>(
    file: string,
    data: T,
    readOnly: boolean,
    options: { stringify?: (data: T) => string; revert?: RevertOnFailure<T> } = {},
  ): JsonCollection<T> {
    return new JsonCollection(file, new Low<T>(new AtomicJsonFile<T>(file, options.stringify), data), readOnly, options.revert);
  }

  get data(): T {
    return this.#db.data;
  }

  set data(value: T) {
    this.#removed = false;
    this.#db.data = value;
  }

  /** Deletes the file (after any write in flight); a later write() brings it back. */
  remove(): Promise<void> {
    this.#removed = true;
    return this.write();
  }

  /**
   * Persists the current data; resolves once a write that includes it is on disk. Calls made while a
   * write is running share one queued write, so a burst of N changes costs one stringify and one
   * rename, not N. When a write fails and the collection reverts, the queued write fails with it
   * (the changes it was to carry are gone from memory), and so does every caller that joined either.
   */
  write(): Promise<void> {
    if (this.#readOnly) return Promise.reject(new Error('The store was opened read-only'));
    if (this.#queued) return this.#queued;
    const run = (): Promise<void> => {
      this.#queued = undefined;
      const written = this.#removed ? gated(this.file, () => fsp.rm(this.file, { force: true })) : this.#db.write();
      const current = written.catch((error: unknown) => {
        if (this.#writing === current) this.#writing = undefined;
        if (this.#revert) this.#revertToFile();
        throw error;
      });
      this.#writing = current;
      current.then(
        () => this.#writing === current && (this.#writing = undefined),
        () => {},
      );
      return current;
    };
    const previous = this.#writing ?? Promise.resolve();
    // A failed write that reverted fails the one queued behind it; otherwise that one still runs.
    const next = this.#revert ? previous.then(run) : previous.catch(() => {}).then(run);
    this.#queued = next;
    return next;
  }

  /** After a failed write: the data as the file has it, and no write queued on the changes just dropped. */
  #revertToFile(): void {
    // Callers that joined the queued write are failed by its chain; new changes start a new write.
    this.#queued = undefined;
    const before = this.#db.data;
    let after: T;
    try {
      after = this.#revert!.reload();
    } catch {
      // The file cannot be read back: memory keeps what it has, the next write tries again.
      return;
    }
    this.#removed = false;
    this.#db.data = after;
    this.#revert!.onRevert?.(before, after);
  }

  /** Resolves when nothing is being written (for close()). */
  async settle(): Promise<void> {
    while (this.#queued || this.#writing) await (this.#queued ?? this.#writing)!.catch(() => {});
  }
}
