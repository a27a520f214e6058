/** A compact in-memory inverted index for article search (token -> packed postings), and its client that keeps it in a worker thread. */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Access } from '../../schemas/member.ts';
import { publicBodyOf } from '../../schemas/teaser.ts';

const WORD = /[\p{L}\p{N}]+/gu;
const ASCII = /^[\p{ASCII}]*$/u;
const ASCII_WORD = /[a-z0-9]+/g;

/** Lowercases, strips diacritics and splits text into word tokens. */
export function tokenize(text: string): string[] {
  // Plain ASCII (most English copy) has no diacritics to strip and no letters beyond a-z: the same
  // tokens come out without NFKD and Unicode classes, which dominate the cost of indexing at start.
  if (ASCII.test(text)) return text.toLowerCase().match(ASCII_WORD) ?? [];
  const folded = text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
  return folded.match(WORD) ?? [];
}

export function stripTags(html: string): string {
  return html.replace(/<[^>]*>/g, ' ').replace(/&[a-z#0-9]+;/gi, ' ');
}

export type IndexedFields = { title: string; dek?: string | undefined; body: string; extra: string };

type TextSource = {
  title: string;
  dek?: string | undefined;
  bodyHtml: string;
  access?: Access | undefined;
  authorName: string;
  sourceLabel?: string | undefined;
  tags: readonly string[];
};

/** What an article contributes to the index (the same at start and on a write): of a gated one's body, only the teaser its page shows. */
export function textFieldsOf(article: TextSource): IndexedFields {
  return {
    title: article.title,
    dek: article.dek,
    body: stripTags(publicBodyOf(article)),
    extra: [article.authorName, article.sourceLabel ?? '', ...article.tags].join(' '),
  };
}

/** Main thread -> index worker. */
export type TextIndexMessage =
  | { type: 'add'; id: string; fields: IndexedFields }
  | { type: 'remove'; id: string }
  | { type: 'query'; seq: number; text: string }
  | { type: 'stats'; seq: number };
/** Index worker -> main thread. */
export type TextIndexReply =
  | { type: 'ready'; documents: number; ms: number; heapMB: number }
  | { type: 'result'; seq: number; ids: string[]; scores: Float64Array }
  | { type: 'stats'; seq: number; documents: number; heapMB: number };

const WEIGHTS = { title: 8, dek: 4, extra: 2, body: 1 } as const;

/**
 * One token's documents in typed arrays (6 bytes an entry instead of a Map entry's ~40): at 100,000
 * articles of 1,000 words that is a fifth of the memory (docs/performance.md, 2026-11-23 entry on store layout 2).
 */
class Posting {
  docs = new Int32Array(4);
  weights = new Uint16Array(4);
  length = 0;

  push(doc: number, weight: number): void {
    if (this.length === this.docs.length) {
      const docs = new Int32Array(this.length * 2);
      docs.set(this.docs);
      this.docs = docs;
      const weights = new Uint16Array(this.length * 2);
      weights.set(this.weights);
      this.weights = weights;
    }
    this.docs[this.length] = doc;
    this.weights[this.length] = Math.min(weight, 65535);
    this.length++;
  }

  /** Gives back the room doubling left at the end (up to half the arrays once a bulk load is done). */
  trim(): void {
    if (this.docs.length === this.length) return;
    this.docs = this.docs.slice(0, Math.max(1, this.length));
    this.weights = this.weights.slice(0, Math.max(1, this.length));
  }

  /** Drops entries of removed documents, in place. */
  compact(alive: (doc: number) => boolean): void {
    let w = 0;
    for (let r = 0; r < this.length; r++) {
      const doc = this.docs[r]!;
      if (!alive(doc)) continue;
      this.docs[w] = doc;
      this.weights[w] = this.weights[r]!;
      w++;
    }
    this.length = w;
  }
}

/**
 * A write costs O(tokens of the article): a document gets a new number on every add, and a removal
 * only forgets the number; postings drop dead numbers when a query walks them (amortised), so no
 * write walks the whole index.
 */
export class TextIndex {
  readonly #postings = new Map<string, Posting>();
  /** Document number -> article id; undefined once removed or replaced. */
  readonly #docIds: (string | undefined)[] = [];
  readonly #docOf = new Map<string, number>();
  /** The dictionary sorted (for prefix search) and the tokens added since it was last sorted. */
  #sortedTokens: string[] = [];
  #newTokens: string[] = [];

  get size(): number {
    return this.#docOf.size;
  }

  /** After a bulk load: postings shrunk to their length (a later add grows one again by doubling). */
  trim(): void {
    for (const posting of this.#postings.values()) posting.trim();
  }

  add(id: string, fields: IndexedFields): void {
    this.remove(id);
    const doc = this.#docIds.length;
    this.#docIds.push(id);
    this.#docOf.set(id, doc);
    // A document's entries are appended last in each posting, so a repeated token adds to that
    // entry: one dictionary lookup per word, no per-document map.
    const addText = (text: string | undefined, weight: number) => {
      if (!text) return;
      for (const token of tokenize(text)) {
        let posting = this.#postings.get(token);
        if (!posting) {
          posting = new Posting();
          this.#postings.set(token, posting);
          this.#newTokens.push(token);
        }
        const last = posting.length - 1;
        if (last >= 0 && posting.docs[last] === doc) posting.weights[last] = Math.min(65535, posting.weights[last]! + weight);
        else posting.push(doc, weight);
      }
    };
    addText(fields.title, WEIGHTS.title);
    addText(fields.dek, WEIGHTS.dek);
    addText(fields.extra, WEIGHTS.extra);
    addText(fields.body, WEIGHTS.body);
  }

  remove(id: string): void {
    const doc = this.#docOf.get(id);
    if (doc === undefined) return;
    this.#docIds[doc] = undefined;
    this.#docOf.delete(id);
  }

  /** Merges the tokens added since the last query into the sorted dictionary: O(new log new + n), on a read. */
  #dictionary(): string[] {
    if (this.#newTokens.length) {
      const fresh = this.#newTokens.sort();
      this.#newTokens = [];
      const old = this.#sortedTokens;
      const merged = new Array<string>(old.length + fresh.length);
      let i = 0;
      let j = 0;
      let k = 0;
      while (i < old.length && j < fresh.length) merged[k++] = old[i]! < fresh[j]! ? old[i++]! : fresh[j++]!;
      while (i < old.length) merged[k++] = old[i++]!;
      while (j < fresh.length) merged[k++] = fresh[j++]!;
      this.#sortedTokens = merged;
    }
    return this.#sortedTokens;
  }

  /** Tokens starting with a prefix, found by binary search in the sorted dictionary. */
  #tokensWithPrefix(prefix: string): string[] {
    const tokens = this.#dictionary();
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
    const alive = (doc: number) => this.#docIds[doc] !== undefined;
    let scores: Map<string, number> | undefined;
    terms.forEach((term, i) => {
      const isLast = i === terms.length - 1;
      const termScores = new Map<string, number>();
      const tokens = isLast && term.length >= 2 ? this.#tokensWithPrefix(term) : [term];
      for (const token of tokens) {
        const posting = this.#postings.get(token);
        if (!posting) continue;
        const exact = token === term ? 1 : 0.5;
        let dead = 0;
        for (let p = 0; p < posting.length; p++) {
          const id = this.#docIds[posting.docs[p]!];
          if (id === undefined) {
            dead++;
            continue;
          }
          const score = posting.weights[p]! * exact;
          const before = termScores.get(id);
          if (before === undefined || score > before) termScores.set(id, score);
        }
        if (dead * 4 > posting.length) posting.compact(alive);
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

/** Measured at start: how long the index took and the heap it holds (the issue asks the indexes' memory be measured). */
export type TextIndexStats = { documents: number; buildMs: number; heapMB: number; inWorker: boolean };

// Not a literal inside `new URL(...)`: a bundler would copy the file as an asset without its imports.
const WORKER_NAME = './text-index-worker.ts';
const WORKER_FILE = new URL(WORKER_NAME, import.meta.url);

/**
 * The store's handle on the text index. Normally the index lives in a worker thread that builds
 * itself from the article files (start does not wait for it; searches do), and writes are posted to
 * it, so the server's event loop never tokenises a body. Where the worker file is not beside this
 * module (code bundled by a build), the index is built in this thread on the first search instead.
 * `lazy` (read-only snapshots: builds and reports, which rarely search) starts either on first use.
 */
export class TextSearch {
  #worker: Worker | undefined;
  #local: TextIndex | undefined;
  /** Writes made before the index is built (a lazy start, or a local index): replayed onto it. */
  #backlog: TextIndexMessage[] = [];
  #seq = 0;
  readonly #pending = new Map<number, (reply: TextIndexReply) => void>();
  #ready: Promise<TextIndexStats> | undefined;
  #failed: Error | undefined;
  readonly #start: () => void;

  constructor(dir: string, loadLocal: (index: TextIndex) => void, lazy = false) {
    this.#start = () => this.#begin(dir, loadLocal);
    if (!lazy) this.#start();
  }

  #begin(dir: string, loadLocal: (index: TextIndex) => void): void {
    const file = WORKER_FILE.protocol === 'file:' ? fileURLToPath(WORKER_FILE) : '';
    if (!file || !fs.existsSync(file)) {
      let built: Promise<TextIndexStats> | undefined;
      this.#ready = {
        // Lazy: built the first time a search needs it.
        then: (resolve: (value: TextIndexStats) => unknown, reject: (error: unknown) => unknown) => {
          built ??= Promise.resolve().then(() => {
            const started = performance.now();
            const index = new TextIndex();
            loadLocal(index);
            for (const message of this.#backlog) this.#applyLocal(index, message);
            this.#backlog = [];
            this.#local = index;
            return { documents: index.size, buildMs: Math.round(performance.now() - started), heapMB: 0, inWorker: false };
          });
          return built.then(resolve, reject);
        },
      } as Promise<TextIndexStats>;
      return;
    }
    const worker = new Worker(file, { workerData: { dir } });
    worker.unref();
    this.#worker = worker;
    // Writes made before a lazy start: the worker applies them after its scan, in order.
    for (const message of this.#backlog) worker.postMessage(message);
    this.#backlog = [];
    this.#ready = new Promise<TextIndexStats>((resolve, reject) => {
      worker.on('message', (reply: TextIndexReply) => {
        if (reply.type === 'ready') resolve({ documents: reply.documents, buildMs: reply.ms, heapMB: reply.heapMB, inWorker: true });
        else {
          this.#pending.get(reply.seq)?.(reply);
          this.#pending.delete(reply.seq);
        }
      });
      worker.on('error', (error) => {
        this.#failed = error;
        reject(error);
      });
      worker.on('exit', (code) => {
        this.#failed ??= new Error(`The text index worker stopped (exit code ${code})`);
        reject(this.#failed);
        for (const settle of this.#pending.values()) settle({ type: 'stats', seq: -1, documents: 0, heapMB: 0 });
        this.#pending.clear();
      });
    });
    // Nobody may be waiting yet; a failure is reported to the next search.
    this.#ready.catch(() => {});
  }

  #applyLocal(index: TextIndex, message: TextIndexMessage): void {
    if (message.type === 'add') index.add(message.id, message.fields);
    else if (message.type === 'remove') index.remove(message.id);
  }

  #send(message: TextIndexMessage): void {
    // Not started (lazy): kept and replayed after the start's scan, which may read a file before its write lands.
    if (!this.#ready) {
      this.#backlog.push(message);
      return;
    }
    if (this.#worker) {
      if (!this.#failed) this.#worker.postMessage(message);
    } else if (this.#local) this.#applyLocal(this.#local, message);
    else this.#backlog.push(message);
  }

  add(id: string, fields: IndexedFields): void {
    this.#send({ type: 'add', id, fields });
  }

  remove(id: string): void {
    this.#send({ type: 'remove', id });
  }

  /** Resolves once the articles on disk at start are indexed. */
  ready(): Promise<TextIndexStats> {
    if (!this.#ready) this.#start();
    return this.#ready!;
  }

  async query(text: string): Promise<Map<string, number>> {
    await this.ready();
    if (this.#local) return this.#local.query(text);
    if (this.#failed) throw this.#failed;
    const seq = ++this.#seq;
    const reply = await new Promise<TextIndexReply>((resolve) => {
      this.#pending.set(seq, resolve);
      this.#worker!.postMessage({ type: 'query', seq, text } satisfies TextIndexMessage);
    });
    if (reply.type !== 'result') throw this.#failed ?? new Error('The text index worker did not answer');
    const scores = new Map<string, number>();
    for (let i = 0; i < reply.ids.length; i++) scores.set(reply.ids[i]!, reply.scores[i]!);
    return scores;
  }

  /** Stops the worker (store close). */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    this.#failed ??= new Error('The store is closed');
    if (worker) await worker.terminate();
  }
}
