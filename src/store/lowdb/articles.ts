/** Articles, one file each: the repository that writes them, over the in-memory indexes, the bodies on disk and the text index. */
import type { ArticleFilter, ArticleRecord } from '../../schemas/article.ts';
import type { TermKind } from '../../schemas/taxonomy.ts';
import type { ArticleRead, ArticleRepository, ArticleSort, Page } from '../types.ts';
import { JsonCollection, readJsonFileSync } from './file.ts';
import { articleFile, inPool } from './layout.ts';
import type { ArticleBodies } from './article-bodies.ts';
import { articleMatcher, byRecent } from './article-filter.ts';
import { ArticleIndexes } from './article-indexes.ts';
import { TextSearch, textFieldsOf, type TextIndex, type TextIndexStats } from './text-index.ts';
import { loadArticleFiles } from './layout.ts';
import { writeListingSnapshot } from './listing-snapshot.ts';

/** The collection's version, in a file of its own: bumped (and on disk) before the article file it counts. */
export type ArticlesVersionFile = { version: number };
/** The layout-1 articles.json (read by the migration). */
export type ArticlesFile = { version: number; articles: ArticleRecord[] };

export class LowdbArticles implements ArticleRepository {
  readonly #dir: string;
  readonly #readOnly: boolean;
  readonly #version: JsonCollection<ArticlesVersionFile>;
  readonly #files = new Map<string, JsonCollection<ArticleRecord>>();
  /** Lookups, sorted lists and month counts of the records in memory (article-indexes.ts). */
  readonly #indexes: ArticleIndexes;
  readonly #bodies: ArticleBodies;
  readonly #text: TextSearch;
  /** An article write failed since the open: no listing snapshot is written at close (the files are read at the next open). */
  #writeFailed = false;
  /**
   * Per article, how many times a failed write put its record back as its file has it, and that
   * write's error: a write begun before such a revert carried a change that is gone from memory, and
   * fails too even when its own file write went through (it wrote the record as reverted).
   */
  readonly #reverts = new Map<string, { count: number; error: unknown }>();

  /** `records` come from `bodies.detach`: listing fields in memory, bodies on disk. */
  constructor(
    dir: string,
    version: JsonCollection<ArticlesVersionFile>,
    records: Iterable<ArticleRecord>,
    bodies: ArticleBodies,
    readOnly: boolean,
    /** Build the text index only when a search first needs it (a read snapshot, or a process that does not search). */
    lazyText = readOnly,
  ) {
    this.#dir = dir;
    this.#bodies = bodies;
    // The text index reads the article files itself, in a worker thread (see TextSearch).
    this.#text = new TextSearch(
      dir,
      (index: TextIndex) => loadArticleFiles<ArticleRecord>(dir, (_file, record) => index.add(record.id, textFieldsOf(record))),
      lazyText,
    );
    this.#version = version;
    this.#readOnly = readOnly;
    this.#indexes = new ArticleIndexes(records);
  }

  /** Resolves once every article on disk at start is in the text index (searches wait for it), with its size. */
  textReady(): Promise<TextIndexStats> {
    return this.#text.ready();
  }

  /**
   * Indexes a new record (its body in hand) and moves the body out of memory once its file is
   * written; answers the record as indexed (a copy whose body is read from the file).
   */
  #index(record: ArticleRecord): ArticleRecord {
    this.#text.add(record.id, textFieldsOf(record));
    return this.#indexes.indexRecord(this.#bodies.hold(record));
  }

  /** Takes a record out of every index, its body kept as a plain value for whoever still holds it. */
  #unindex(article: ArticleRecord): void {
    this.#bodies.freeze(article);
    this.#indexes.unindex(article);
    this.#text.remove(article.id);
  }

  async get(id: string, options?: ArticleRead) {
    return this.#withBody(this.#indexes.byId.get(id), options);
  }

  async getBySlug(slug: string, options?: ArticleRead) {
    return this.#withBody(this.#indexes.bySlug.get(slug), options);
  }

  async #withBody(record: ArticleRecord | undefined, options: ArticleRead | undefined) {
    if (record && options?.body) await this.#bodies.load(record.id);
    return record;
  }

  list(filter: ArticleFilter, page: Page, sort?: ArticleSort) {
    return this.#indexes.list(filter, page, sort);
  }

  periods() {
    return this.#indexes.periods();
  }

  terms(kind: TermKind) {
    return this.#indexes.terms(kind);
  }

  count(filter: ArticleFilter) {
    return this.#indexes.count(filter);
  }

  /**
   * Full-text search: relevance, then recency. Only the first offset + limit matches are kept in
   * order (a bounded insertion), not all of them sorted: a common word matches tens of thousands of
   * articles at 100,000, and sorting them all took seconds.
   */
  async search(query: string, filter: ArticleFilter, page: Page) {
    const scores = await this.#text.query(query);
    const keep = page.offset + page.limit;
    const top: { article: ArticleRecord; score: number }[] = [];
    const before = (a: { article: ArticleRecord; score: number }, b: { article: ArticleRecord; score: number }) =>
      b.score - a.score || byRecent(a.article, b.article);
    let total = 0;
    const matches = articleMatcher(filter);
    for (const [id, score] of scores) {
      const article = this.#indexes.byId.get(id);
      if (!article || !matches(article)) continue;
      total++;
      if (keep <= 0) continue;
      const entry = { article, score };
      if (top.length === keep && before(entry, top[keep - 1]!) >= 0) continue;
      let lo = 0;
      let hi = top.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (before(top[mid]!, entry) < 0) lo = mid + 1;
        else hi = mid;
      }
      top.splice(lo, 0, entry);
      if (top.length > keep) top.pop();
    }
    return { items: top.slice(page.offset).map((e) => e.article), total };
  }

  stats() {
    return this.#indexes.stats();
  }

  slugExists(slug: string, exceptId?: string) {
    return this.#indexes.slugExists(slug, exceptId);
  }

  findByOrigin(sourceId: string, guid: string) {
    return this.#indexes.findByOrigin(sourceId, guid);
  }

  findByCanonicalUrl(url: string) {
    return this.#indexes.findByCanonicalUrl(url);
  }

  listDue(now: string) {
    return this.#indexes.listDue(now);
  }

  /**
   * Writes one article's file (or deletes it) after the version bump is on disk: a crash in between
   * leaves a version bumped for nothing (a harmless extra render), never a change the version misses.
   */
  async #persist(id: string, held = true): Promise<void> {
    const reverts = this.#reverts.get(id)?.count ?? 0;
    try {
      await this.#write(id);
    } catch (error) {
      this.#writeFailed = true;
      // The first failure since this write began puts the record back as its file has it; a later
      // one finds that done (and any write begun since carries on, or fails and reverts itself).
      if ((this.#reverts.get(id)?.count ?? 0) === reverts) this.#revert(id, error);
      throw error;
    } finally {
      // The body held for this write may leave memory: the file has it (after a failed write the
      // revert put the body the file still has in its place, which is what a restart would see).
      if (held) this.#bodies.written(id);
    }
    const since = this.#reverts.get(id);
    if ((since?.count ?? 0) !== reverts) throw since!.error;
  }

  /**
   * A write of article `id` failed (a full disk): its record goes back to what its file holds, in
   * every index, so no reader sees a change that is not stored and a restart shows what they saw.
   */
  #revert(id: string, error: unknown): void {
    this.#reverts.set(id, { count: (this.#reverts.get(id)?.count ?? 0) + 1, error });
    const current = this.#indexes.byId.get(id);
    if (current) this.#unindex(current);
    let stored: ArticleRecord | undefined;
    try {
      stored = readJsonFileSync<ArticleRecord>(articleFile(this.#dir, id));
    } catch {
      // Unreadable: the article stays out of the indexes, as an open would refuse it.
    }
    this.#bodies.revert(id, stored?.bodyHtml ?? '');
    if (!stored) return;
    this.#text.add(id, textFieldsOf(stored));
    this.#indexes.indexRecord(this.#bodies.detach(stored));
  }

  async #write(id: string): Promise<void> {
    if (this.#readOnly) throw new Error('The store was opened read-only');
    this.#version.data.version++;
    await this.#version.write();
    const article = this.#indexes.byId.get(id);
    let file = this.#files.get(id);
    if (!file) {
      const path = articleFile(this.#dir, id);
      // A failed write also fails the write queued behind it: the record it carries is reverted above.
      const reload = () => readJsonFileSync<ArticleRecord>(path) ?? ({} as ArticleRecord);
      this.#files.set(id, (file = JsonCollection.of(path, (article ?? {}) as ArticleRecord, false, { revert: { reload } })));
    }
    if (!article) {
      this.#bodies.forget(id);
      await file.remove();
      // Forget the handle only if nothing re-created the article meanwhile.
      if (!this.#indexes.byId.has(id)) this.#files.delete(id);
      return;
    }
    file.data = article;
    await file.write();
  }

  async insert(article: ArticleRecord) {
    if (this.#readOnly) throw new Error('The store was opened read-only');
    if (this.#indexes.byId.has(article.id)) throw new Error(`Article ${article.id} exists`);
    this.#index(structuredClone(article));
    await this.#persist(article.id);
  }

  async insertMany(articles: readonly ArticleRecord[]) {
    if (this.#readOnly) throw new Error('The store was opened read-only');
    const ids = new Set<string>();
    for (const { id } of articles) {
      if (this.#indexes.byId.has(id) || ids.has(id)) throw new Error(`Article ${id} exists`);
      ids.add(id);
    }
    for (const article of articles) this.#index(structuredClone(article));
    // One file per article, many written at a time (the hashed folders spread them).
    await inPool([...ids], 64, (id) => this.#persist(id));
  }

  async replace(article: ArticleRecord) {
    const old = this.#indexes.byId.get(article.id);
    if (!old) return false;
    if (this.#readOnly) throw new Error('The store was opened read-only');
    this.#swap(old, article);
    await this.#persist(article.id);
    return true;
  }

  /** Swaps a record in, with the version after the old one's (issue 14: the store owns versions). */
  #swap(old: ArticleRecord, article: ArticleRecord): ArticleRecord {
    const next = { ...structuredClone(article), version: (old.version ?? 1) + 1 };
    this.#unindex(old);
    return this.#index(next);
  }

  async replaceIfVersion(article: ArticleRecord, expectedVersion: number) {
    // Check and swap run synchronously: no other write can slip in between.
    const old = this.#indexes.byId.get(article.id);
    if (!old) return undefined;
    if ((old.version ?? 1) !== expectedVersion) return { conflict: old };
    if (this.#readOnly) throw new Error('The store was opened read-only');
    const saved = this.#swap(old, article);
    await this.#persist(article.id);
    return { saved };
  }

  async publishIfScheduled(id: string, now: string) {
    const article = this.#indexes.byId.get(id);
    if (!article || article.status !== 'scheduled') return undefined;
    const { scheduledFor: _dropped, ...rest } = article;
    const published: ArticleRecord = {
      ...rest,
      status: 'published',
      publishedAt: article.publishedAt ?? now,
      updatedAt: now,
      version: (article.version ?? 1) + 1,
    };
    this.#unindex(article);
    const indexed = this.#index(published);
    await this.#persist(article.id);
    return indexed;
  }

  async delete(id: string) {
    const article = this.#indexes.byId.get(id);
    if (!article) return false;
    this.#unindex(article);
    await this.#persist(id, false);
    return true;
  }

  /** Resolves once no article file is being written. */
  async settle(): Promise<void> {
    await Promise.all([this.#version.settle(), ...[...this.#files.values()].map((f) => f.settle())]);
  }

  /** The articles' version the listing snapshot on disk describes, when known (read at open, or written). */
  #snapshotVersion: number | undefined;

  /** The records were read from the listing snapshot of the current version: a close without a write since need not write it again. */
  openedFromSnapshot(): void {
    this.#snapshotVersion = this.#version.data.version;
  }

  /** Writes the listing snapshot the next open reads instead of every article file (at close, after settle). */
  async snapshotListing(): Promise<void> {
    if (this.#readOnly || this.#writeFailed || this.#snapshotVersion === this.#version.data.version) return;
    await writeListingSnapshot(this.#dir, this.#version.data.version, this.#indexes.byId.values());
    this.#snapshotVersion = this.#version.data.version;
  }

  /** Stops the text index worker (after settle, at close). */
  async closeText(): Promise<void> {
    await this.#text.close();
  }

  async version() {
    return this.#version.data.version;
  }
}
