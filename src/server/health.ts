/**
 * The degraded states of this server (a full disk, a database that is down): set by whoever meets the
 * fault, reported by /api/ready until cleared, each optionally with a probe that clears it by itself
 * once the fault is gone, so recovery needs no restart.
 */

export type DegradedState = {
  /** What is degraded, e.g. `disk:data`, `disk:served`, `database`. */
  key: string;
  /** Why, in a sentence an operator understands. */
  message: string;
  /** When it was first set (ISO). */
  since: string;
};

export type DegradedOptions = {
  /** Answers true once the fault is gone; asked every `probeEveryMs` while the state is set. */
  probe?: () => Promise<boolean>;
  /** @default 2000 */
  probeEveryMs?: number;
};

export class HealthRegistry {
  readonly #states = new Map<string, DegradedState>();
  readonly #probes = new Map<string, NodeJS.Timeout>();
  readonly #cleared = new Set<(key: string) => void>();

  /** Marks `key` degraded (a state already set keeps its `since` and takes the new message). Answers whether it was new. */
  set(key: string, message: string, options: DegradedOptions = {}): boolean {
    const existing = this.#states.get(key);
    this.#states.set(key, { key, message, since: existing?.since ?? new Date().toISOString() });
    if (options.probe && !this.#probes.has(key)) this.#startProbe(key, options.probe, options.probeEveryMs ?? 2000);
    return existing === undefined;
  }

  /** Clears `key`; answers whether it was set. Listeners hear of it (a worker retries what waited for it). */
  clear(key: string): boolean {
    clearInterval(this.#probes.get(key));
    this.#probes.delete(key);
    if (!this.#states.delete(key)) return false;
    for (const listener of this.#cleared) listener(key);
    return true;
  }

  has(key: string): boolean {
    return this.#states.has(key);
  }

  /** Every degraded state, oldest first. */
  list(): DegradedState[] {
    return [...this.#states.values()];
  }

  /** Calls `listener` with each key cleared from now on; answers the function that stops it. */
  onClear(listener: (key: string) => void): () => void {
    this.#cleared.add(listener);
    return () => this.#cleared.delete(listener);
  }

  /** Stops every probe (the runtime's stop). */
  close(): void {
    for (const timer of this.#probes.values()) clearInterval(timer);
    this.#probes.clear();
  }

  #startProbe(key: string, probe: () => Promise<boolean>, everyMs: number): void {
    let running = false;
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      probe()
        .then((ok) => ok && this.#probes.get(key) === timer && this.clear(key))
        .catch(() => {})
        .finally(() => (running = false));
    }, everyMs);
    // A probe never keeps the process alive.
    timer.unref();
    this.#probes.set(key, timer);
  }
}
