/** Rendered pages of a store one process owns: nothing is kept (no other server needs the bytes), listeners in this process are told. */
import type { RenderedPageNote, RenderedPageRepository } from './types.ts';

export class LocalRenderedPages implements RenderedPageRepository {
  readonly shared = false;
  readonly #listeners = new Set<(note: RenderedPageNote) => void>();
  #seq = 0;

  async put(path: string, _body: Uint8Array | undefined, origin: string) {
    const note = { path, seq: ++this.#seq, origin };
    for (const listener of this.#listeners) listener(note);
    return note.seq;
  }
  async get() {
    return undefined;
  }
  async list() {
    return [];
  }
  async pruneRemovals() {
    return 0;
  }
  async listen(listener: (note: RenderedPageNote) => void) {
    this.#listeners.add(listener);
    return async () => void this.#listeners.delete(listener);
  }
}
