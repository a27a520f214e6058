/**
 * The write gate of an open lowdb DATA_DIR: every file operation that changes the folder passes
 * through it, so a backup can hold new ones, wait for those in flight and take the folder as one
 * point in time (the store recovers from a crash at any point, so that instant restores like one).
 */
import path from 'node:path';

export class WriteGate {
  #inFlight = 0;
  /** Set while a hold runs: operations that arrive wait for it. */
  #held: Promise<void> | undefined;
  #idle: (() => void) | undefined;

  /** Runs one file operation, after any hold has ended. */
  async run<T>(operation: () => Promise<T>): Promise<T> {
    while (this.#held) await this.#held;
    this.#inFlight++;
    try {
      return await operation();
    } finally {
      this.#inFlight--;
      if (this.#inFlight === 0) this.#idle?.();
    }
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
 * The gates of the folders this process has open for writing, by folder. Found by a file's path, so
 * every writer under DATA_DIR (collections, buckets, revisions, logs) passes through its folder's gate
 * without the gate being handed through every repository.
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
      if (file.length > dir.length && file.startsWith(dir) && file[dir.length] === path.sep) return gate.run(operation);
  return operation();
}
