/** A sorted list in chunks of at most 512 items: insert and remove cost a binary search and one small splice, whatever the length. */

const CHUNK = 512;

/**
 * One flat array would do, but a splice in a 100,000-item array moves every later pointer through
 * V8's write barrier (several calls per save: docs/performance.md, 2026-11-23); chunks keep that to 512 at most.
 */
export class SortedList<T> implements Iterable<T> {
  readonly #compare: (a: T, b: T) => number;
  #chunks: T[][] = [];
  #length = 0;

  constructor(compare: (a: T, b: T) => number, sorted: readonly T[] = []) {
    this.#compare = compare;
    for (let i = 0; i < sorted.length; i += CHUNK) this.#chunks.push(sorted.slice(i, i + CHUNK));
    this.#length = sorted.length;
  }

  get length(): number {
    return this.#length;
  }

  /** The chunk that holds (or would hold) `item`: the last whose first item does not sort after it. */
  #chunkOf(item: T): number {
    let lo = 0;
    let hi = this.#chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.#compare(this.#chunks[mid]![0]!, item) <= 0) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  #indexIn(chunk: T[], item: T): number {
    let lo = 0;
    let hi = chunk.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#compare(chunk[mid]!, item) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  insert(item: T): void {
    this.#length++;
    if (this.#chunks.length === 0) {
      this.#chunks.push([item]);
      return;
    }
    const c = this.#chunkOf(item);
    const chunk = this.#chunks[c]!;
    chunk.splice(this.#indexIn(chunk, item), 0, item);
    if (chunk.length > CHUNK * 2) this.#chunks.splice(c, 1, chunk.slice(0, CHUNK), chunk.slice(CHUNK));
  }

  /** Removes this exact item (found by its sort position); answers whether it was there. */
  remove(item: T): boolean {
    if (this.#chunks.length === 0) return false;
    const c = this.#chunkOf(item);
    const chunk = this.#chunks[c]!;
    const i = this.#indexIn(chunk, item);
    if (chunk[i] !== item) return false;
    chunk.splice(i, 1);
    this.#length--;
    if (chunk.length === 0) this.#chunks.splice(c, 1);
    return true;
  }

  /**
   * The position of the first item for which `after` holds, given that it holds for every item behind
   * that one too (a sorted list's range bound): a binary search over chunks, then within one.
   */
  firstIndex(after: (item: T) => boolean): number {
    let lo = 0;
    let hi = this.#chunks.length;
    // The first chunk whose last item satisfies the predicate holds the answer.
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const chunk = this.#chunks[mid]!;
      if (after(chunk[chunk.length - 1]!)) hi = mid;
      else lo = mid + 1;
    }
    let index = 0;
    for (let c = 0; c < lo; c++) index += this.#chunks[c]!.length;
    if (lo === this.#chunks.length) return index;
    const chunk = this.#chunks[lo]!;
    let a = 0;
    let b = chunk.length;
    while (a < b) {
      const mid = (a + b) >> 1;
      if (after(chunk[mid]!)) b = mid;
      else a = mid + 1;
    }
    return index + a;
  }

  /** Items [start, end) in order, like Array.prototype.slice. */
  slice(start: number, end: number = this.#length): T[] {
    const out: T[] = [];
    let skip = Math.max(0, start);
    let want = Math.min(end, this.#length) - skip;
    for (const chunk of this.#chunks) {
      if (want <= 0) break;
      if (skip >= chunk.length) {
        skip -= chunk.length;
        continue;
      }
      const part = chunk.slice(skip, skip + want);
      out.push(...part);
      want -= part.length;
      skip = 0;
    }
    return out;
  }

  *[Symbol.iterator](): Iterator<T> {
    for (const chunk of this.#chunks) yield* chunk;
  }
}
