/**
 * The write gate of an open lowdb DATA_DIR: every file operation that changes the folder passes
 * through it, so a backup can note what writes change while it links the folder, then hold new ones
 * and wait for those in flight while it takes those again: the folder as one point in time (the store
 * recovers from a crash at any point, so that instant restores like one).
 */
import path from 'node:path';

export class WriteGate {
  #inFlight = 0;
  /** Set while a hold runs: operations that arrive wait for it. */
  #held: Promise<void> | undefined;
  #idle: (() => void) | undefined;
  /** The paths of the operations in flight (a path twice when two run on it). */
  readonly #paths = new Map<string, number>();
  /** Sets noting every path an operation changes while a recording runs. */
  readonly #recordings = new Set<Set<string>>();

  /** Runs one file operation on `file` (a file, or a folder it removes), after any hold has ended. */
  async run<T>(file: string, operation: () => Promise<T>): Promise<T> {
    while (this.#held) await this.#held;
    this.#inFlight++;
    this.#paths.set(file, (this.#paths.get(file) ?? 0) + 1);
    for (const recording of this.#recordings) recording.add(file);
    try {
      return await operation();
    } finally {
      const left = this.#paths.get(file)! - 1;
      if (left > 0) this.#paths.set(file, left);
      else this.#paths.delete(file);
      this.#inFlight--;
      if (this.#inFlight === 0) this.#idle?.();
    }
  }

  /**
   * Notes every path changed from now on (and those being changed now) until `stop`: a backup links
   * the folder while writes go on, then holds them only to take again what changed meanwhile.
   */
  record(): { paths: Set<string>; stop(): void } {
    const paths = new Set<string>(this.#paths.keys());
    this.#recordings.add(paths);
    return { paths, stop: () => void this.#recordings.delete(paths) };
  }

  /** Runs `work` with no file operation in flight and none starting until it ends (one hold at a time). */
  async hold<T>(work: () => Promise<T>): Promise<T> {
    while (this.#held) await this.#held;
    let release!: () => void;
    this.#held = new Promise<void>((resolve) => (release = resolve));
    try {
      if (this.#inFlight > 0) await new Promise<void>((resolve) => (this.#idle = resolve));
      this.#idle = undefined;
      return await work();
    } finally {
      this.#held = undefined;
      release();
    }
  }
}

/**
 * The gates of the folders this module copy's stores have open for writing, by folder. Found by a
 * file's path, so every writer under DATA_DIR (collections, buckets, revisions, logs) passes through
 * its folder's gate without the gate being handed through every repository. Code from another module
 * copy (the Astro bundle's) asks the open store for its snapshot (`Store.snapshotDataDir`), never this map.
 */
const gates = new Map<string, WriteGate>();

/** Opens the gate of `dir` (a writer's open); answers the function that removes it (its close). */
export function registerWriteGate(dir: string): { gate: WriteGate; unregister: () => void } {
  const key = path.resolve(dir);
  const gate = new WriteGate();
  gates.set(key, gate);
  return { gate, unregister: () => gates.get(key) === gate && gates.delete(key) };
}

/** The gate of the open folder `dir`, if this process has it open for writing. */
export function writeGateOf(dir: string): WriteGate | undefined {
  return gates.get(path.resolve(dir));
}

/** Runs a file operation on `file` through the gate of the open folder it lies in (directly when none is open). */
export function gated<T>(file: string, operation: () => Promise<T>): Promise<T> {
  if (gates.size > 0)
    for (const [dir, gate] of gates)
      if (file.length > dir.length && file.startsWith(dir) && file[dir.length] === path.sep) return gate.run(file, operation);
  return operation();
}
