/** A small in-memory inverted index for article search: token -> (article id -> weight). */

const WORD = /[\p{L}\p{N}]+/gu;

/** Lowercases, strips diacritics and splits text into word tokens. */
export function tokenize(text: string): string[] {
  const folded = text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
  return folded.match(WORD) ?? [];
}

export function stripTags(html: string): string {
  return html.replace(/<[^>]*>/g, ' ').replace(/&[a-z#0-9]+;/gi, ' ');
}

export type IndexedFields = { title: string; dek?: string | undefined; body: string; extra: string };

const WEIGHTS = { title: 8, dek: 4, extra: 2, body: 1 } as const;

export class TextIndex {
  readonly #postings = new Map<string, Map<string, number>>();
  readonly #docs = new Map<string, string[]>();
  #sortedTokens: string[] | undefined;

  add(id: string, fields: IndexedFields): void {
    this.remove(id);
    const weights = new Map<string, number>();
    const addText = (text: string | undefined, weight: number) => {
      if (!text) return;
      for (const token of tokenize(text)) weights.set(token, (weights.get(token) ?? 0) + weight);
    };
    addText(fields.title, WEIGHTS.title);
    addText(fields.dek, WEIGHTS.dek);
    addText(fields.extra, WEIGHTS.extra);
    addText(fields.body, WEIGHTS.body);
    for (const [token, weight] of weights) {
      let posting = this.#postings.get(token);
      if (!posting) {
        posting = new Map();
        this.#postings.set(token, posting);
        this.#sortedTokens = undefined;
      }
      posting.set(id, weight);
    }
    this.#docs.set(id, [...weights.keys()]);
  }

  remove(id: string): void {
    const tokens = this.#docs.get(id);
    if (!tokens) return;
    for (const token of tokens) {
      const posting = this.#postings.get(token);
      posting?.delete(id);
      if (posting && posting.size === 0) {
        this.#postings.delete(token);
        this.#sortedTokens = undefined;
      }
    }
    this.#docs.delete(id);
  }

  /** Tokens starting with a prefix, found by binary search in the sorted dictionary. */
  #tokensWithPrefix(prefix: string): string[] {
    this.#sortedTokens ??= [...this.#postings.keys()].sort();
    const tokens = this.#sortedTokens;
    let lo = 0;
    let hi = tokens.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (tokens[mid]! < prefix) lo = mid + 1;
      else hi = mid;
    }
    const found: string[] = [];
    for (let i = lo; i < tokens.length && tokens[i]!.startsWith(prefix) && found.length < 200; i++) found.push(tokens[i]!);
    return found;
  }

  /**
   * Scores documents matching every query term (the last term also as a prefix, for
   * search-as-you-type). Answers id -> score; empty when nothing matches.
   */
  query(text: string): Map<string, number> {
    const terms = tokenize(text);
    if (terms.length === 0) return new Map();
    let scores: Map<string, number> | undefined;
    terms.forEach((term, i) => {
      const isLast = i === terms.length - 1;
      const termScores = new Map<string, number>();
      const tokens = isLast && term.length >= 2 ? this.#tokensWithPrefix(term) : [term];
      for (const token of tokens) {
        const posting = this.#postings.get(token);
        if (!posting) continue;
        const exact = token === term ? 1 : 0.5;
        for (const [id, weight] of posting) termScores.set(id, Math.max(termScores.get(id) ?? 0, weight * exact));
      }
      if (!scores) {
        scores = termScores;
        return;
      }
      const next = new Map<string, number>();
      for (const [id, score] of scores) {
        const add = termScores.get(id);
        if (add !== undefined) next.set(id, score + add);
      }
      scores = next;
    });
    return scores ?? new Map();
  }
}
