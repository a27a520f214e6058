/**
 * A JSON object of objects (`{"id":{...},...}`) kept as the text of each entry and decoded one entry
 * at a time. The vote buckets are held this way: a vote decodes the one article it is about instead
 * of the ~1,000 visitor ids of its whole bucket, and a bucket in memory is a few strings rather than
 * thousands of small objects. Whole decoded buckets, kept in the LRU, were promoted to the old
 * generation and made the server's garbage collections long pauses under a burst of votes (docs/performance.md, 2026-11-25).
 */

/** One `"key":{...}` member (the value an object of strings and numbers, no nesting), then an optional comma. */
const MEMBER = /"((?:[^"\\]|\\.)*)":(\{(?:[^{}"\\]|"(?:[^"\\]|\\.)*")*\})(,?)/y;

/**
 * Splits the text of a JSON object whose values are flat objects into each member's key and value
 * text, without decoding the values; undefined when the text is not exactly such an object as
 * JSON.stringify writes it (the caller then decodes it whole).
 */
export function splitMembers(text: string): Map<string, string> | undefined {
  const members = new Map<string, string>();
  if (text[0] !== '{') return undefined;
  let at = 1;
  if (text[at] !== '}') {
    for (;;) {
      MEMBER.lastIndex = at;
      const match = MEMBER.exec(text);
      if (!match) return undefined;
      const [, key, value, comma] = match;
      members.set(key!.includes('\\') ? (JSON.parse(`"${key}"`) as string) : key!, value!);
      at = MEMBER.lastIndex;
      if (!comma) break;
    }
  }
  return text[at] === '}' && at === text.length - 1 ? members : undefined;
}

/**
 * The members of one JSON object of objects: undecoded text until `get` or `ensure` asks for one.
 * Callers change a decoded value synchronously after getting it (never across an await), because
 * `stringify` folds every decoded value back into text.
 */
export class LazyEntries<V extends object> {
  readonly #text: Map<string, string>;
  readonly #decoded = new Map<string, V>();

  private constructor(text: Map<string, string>) {
    this.#text = text;
  }

  static empty<V extends object>(): LazyEntries<V> {
    return new LazyEntries<V>(new Map());
  }

  /** From members split by splitMembers. */
  static fromSplit<V extends object>(members: Map<string, string>): LazyEntries<V> {
    return new LazyEntries<V>(members);
  }

  /** From decoded values (a file in another form, tests). */
  static of<V extends object>(values: Record<string, V>): LazyEntries<V> {
    return new LazyEntries<V>(new Map(Object.entries(values).map(([key, value]) => [key, JSON.stringify(value)])));
  }

  has(key: string): boolean {
    return this.#decoded.has(key) || this.#text.has(key);
  }

  /** The member's value, decoded on first use; undefined when there is none. */
  get(key: string): V | undefined {
    const decoded = this.#decoded.get(key);
    if (decoded) return decoded;
    const text = this.#text.get(key);
    if (text === undefined) return undefined;
    const value = JSON.parse(text) as V;
    this.#decoded.set(key, value);
    this.#text.delete(key);
    return value;
  }

  /** The member's value, created by `create` when there is none. */
  ensure(key: string, create: () => V): V {
    const value = this.get(key);
    if (value) return value;
    const created = create();
    this.#decoded.set(key, created);
    return created;
  }

  delete(key: string): void {
    this.#decoded.delete(key);
    this.#text.delete(key);
  }

  keys(): string[] {
    return [...this.#text.keys(), ...this.#decoded.keys()];
  }

  /** Every member decoded, as a plain object (what JSON.stringify writes for it). */
  toJSON(): Record<string, V> {
    const out: Record<string, V> = {};
    for (const [key, text] of this.#text) out[key] = JSON.parse(text) as V;
    for (const [key, value] of this.#decoded) out[key] = value;
    return out;
  }

  /** The object's JSON text: undecoded members copied as read, decoded ones encoded and kept as text again. */
  stringify(): string {
    for (const [key, value] of this.#decoded) this.#text.set(key, JSON.stringify(value));
    this.#decoded.clear();
    const parts: string[] = [];
    for (const [key, text] of this.#text) parts.push(`${JSON.stringify(key)}:${text}`);
    return `{${parts.join(',')}}`;
  }
}
