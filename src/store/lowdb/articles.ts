/** Articles, one file each, with in-memory indexes kept sorted so a write costs O(log n) and listings never scan. */
import {
  articlePeriod,
  periodRange,
  type ArticleFilter,
  type ArticlePeriod,
  type ArticleRecord,
  type ArticleStats,
  type TermCount,
} from '../../schemas/article.ts';
import { slugifyTags, slugifyTerm, type TermKind } from '../../schemas/taxonomy.ts';
import type { ArticleRead, ArticleRepository, ArticleSort, Page } from '../types.ts';
import { JsonCollection, readJsonFileSync } from './file.ts';
import { articleFile, inPool } from './layout.ts';
import type { ArticleBodies } from './article-bodies.ts';
import { SortedList } from './sorted-list.ts';
import { TextSearch, textFieldsOf, type TextIndex, type TextIndexStats } from './text-index.ts';
import { loadArticleFiles } from './layout.ts';
import { writeListingSnapshot } from './listing-snapshot.ts';

/** The collection's version, in a file of its own: bumped (and on disk) before the article file it counts. */
export type ArticlesVersionFile = { version: number };
/** The layout-1 articles.json (read by the migration). */
export type ArticlesFile = { version: number; articles: ArticleRecord[] };

/** The date an article is listed by: published date, else last update. */
export function sortDate(article: ArticleRecord): string {
  return article.publishedAt ?? article.updatedAt;
}

/** Newest first, ties by id (descending): a total order, so a record's position is found by binary search. */
function byRecent(a: ArticleRecord, b: ArticleRecord): number {
  const da = sortDate(a);
  const db = sortDate(b);
  return da < db ? 1 : da > db ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** The keys of the published lists an article belongs to besides '*' and its section: one per tag slug and one for its author. */
function termKeys(article: ArticleRecord): string[] {
  const keys = slugifyTags(article.tags).map((slug) => `tag:${slug}`);
  const author = slugifyTerm(article.authorName);
  if (author) keys.push(`author:${author}`);
  return keys;
}

/** The published list a filter reads from: a tag's or author's when it names one, else its section's, else all. */
function listKeyOf(filter: ArticleFilter): string {
  if (filter.tag !== undefined) return `tag:${filter.tag}`;
  if (filter.author !== undefined) return `author:${filter.author}`;
  return filter.section ?? '*';
}

/** The newest-first list under `key`, made empty on first use. */
function listIn(lists: Map<string, SortedList<ArticleRecord>>, key: string): SortedList<ArticleRecord> {
  let list = lists.get(key);
  if (!list) lists.set(key, (list = new SortedList(byRecent)));
  return list;
}

function byUpdated(a: ArticleRecord, b: ArticleRecord): number {
  return a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** Normalises an ISO date or date-time bound to a comparable ISO string. */
function bound(value: string | undefined, end: boolean): string | undefined {
  if (!value) return undefined;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return `${value}T${end ? '23:59:59.999' : '00:00:00.000'}Z`;
  return new Date(value).toISOString();
}

/** A stored date as it was written by toISOString(): compared as a string without parsing it. */
const CANONICAL_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * The filter as a test of one article, with its bounds and needles worked out once: a month's
 * sitemap lists thousands of articles through it, and parsing the bounds and each article's date
 * every time made that a long event-loop turn at a large archive (docs/performance.md, 2026-11-25).
 */
export function articleMatcher(filter: ArticleFilter): (article: ArticleRecord) => boolean {
  const from = bound(filter.dateFrom, false);
  const to = bound(filter.dateTo, true);
  const source = filter.source?.toLowerCase();
  const search = filter.search?.toLowerCase();
  return (article) => {
    if (filter.section && article.section !== filter.section) return false;
    if (filter.statuses && !filter.statuses.includes(article.status)) return false;
    if (filter.createdBy !== undefined && article.createdBy !== filter.createdBy) return false;
    if (filter.tag !== undefined && !article.tags.some((tag) => slugifyTerm(tag) === filter.tag)) return false;
    if (filter.author !== undefined && slugifyTerm(article.authorName) !== filter.author) return false;
    if (filter.isBreaking !== undefined && article.isBreaking !== filter.isBreaking) return false;
    if (filter.isEditorsPick !== undefined && article.isEditorsPick !== filter.isEditorsPick) return false;
    if (source && !(article.sourceLabel ?? '').toLowerCase().includes(source)) return false;
    if (from || to) {
      const stored = sortDate(article);
      const date = CANONICAL_DATE.test(stored) ? stored : new Date(stored).toISOString();
      if (from && date < from) return false;
      if (to && date > to) return false;
    }
    if (search) {
      const haystack = [article.title, article.dek ?? '', article.authorName, article.sourceLabel ?? '', ...article.tags]
        .join('\n')
        .toLowerCase();
      if (!haystack.includes(search)) return false;
    }
    return true;
  };
}

export class LowdbArticles implements ArticleRepository {
  readonly #dir: string;
  readonly #readOnly: boolean;
  readonly #version: JsonCollection<ArticlesVersionFile>;
  readonly #files = new Map<string, JsonCollection<ArticleRecord>>();
  readonly #byId = new Map<string, ArticleRecord>();
  readonly #bySlug = new Map<string, ArticleRecord>();
  readonly #byOrigin = new Map<string, ArticleRecord>();
  readonly #byCanonical = new Map<string, ArticleRecord>();
  readonly #bodies: ArticleBodies;
  readonly #text: TextSearch;
  /** Sorted views, kept sorted on every write (binary search), never rebuilt. */
  readonly #recent: SortedList<ArticleRecord>;
  readonly #updated: SortedList<ArticleRecord>;
  /** Published articles newest first, per section, under '*' for all, and per tag and author slug (`tag:x`, `author:x`). */
  readonly #publishedBySection = new Map<string, SortedList<ArticleRecord>>();
  /**
   * Articles of every other status newest first, per status: the scheduler reads the scheduled ones
   * every tick (at least every 30 s) and the admin lists drafts, a few among the whole archive (a
   * scan of the whole archive for them held the event loop: docs/performance.md, 2026-11-26).
   */
  readonly #byStatus = new Map<string, SortedList<ArticleRecord>>();
  /** Published articles whose date is not in toISOString's form (a date range on them is checked one by one). */
  #oddDates = 0;
  /** Published articles per month, with the newest updatedAt among them (`stale`: recounted when asked). */
  readonly #periods = new Map<string, { count: number; lastmod: string; stale: boolean }>();
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
    const all: ArticleRecord[] = [];
    for (const article of records) {
      this.#indexMaps(article);
      all.push(article);
    }
    const recent = all.sort(byRecent);
    const published = new Map<string, ArticleRecord[]>([['*', []]]);
    const others = new Map<string, ArticleRecord[]>();
    for (const article of recent) {
      if (article.status !== 'published') {
        let list = others.get(article.status);
        if (!list) others.set(article.status, (list = []));
        list.push(article);
        continue;
      }
      published.get('*')!.push(article);
      for (const key of [article.section, ...termKeys(article)]) {
        let list = published.get(key);
        if (!list) published.set(key, (list = []));
        list.push(article);
      }
    }
    for (const [section, list] of published) this.#publishedBySection.set(section, new SortedList(byRecent, list));
    for (const [status, list] of others) this.#byStatus.set(status, new SortedList(byRecent, list));
    for (const article of published.get('*')!) this.#countPublished(article);
    this.#recent = new SortedList(byRecent, recent);
    this.#updated = new SortedList(byUpdated, [...recent].sort(byUpdated));
  }

  /** Resolves once every article on disk at start is in the text index (searches wait for it), with its size. */
  textReady(): Promise<TextIndexStats> {
    return this.#text.ready();
  }

  #publishedList(section: string): SortedList<ArticleRecord> {
    return listIn(this.#publishedBySection, section);
  }

  #statusList(status: string): SortedList<ArticleRecord> {
    return listIn(this.#byStatus, status);
  }

  #indexMaps(article: ArticleRecord): void {
    this.#byId.set(article.id, article);
    this.#bySlug.set(article.slug, article);
    if (article.origin) {
      this.#byOrigin.set(`${article.origin.sourceId}\u0000${article.origin.guid}`, article);
      if (article.origin.canonicalUrl) this.#byCanonical.set(article.origin.canonicalUrl, article);
    }
  }

  /**
   * Indexes a new record (its body in hand) and moves the body out of memory once its file is
   * written; answers the record as indexed (a copy whose body is read from the file).
   */
  #index(record: ArticleRecord): ArticleRecord {
    this.#text.add(record.id, textFieldsOf(record));
    return this.#indexRecord(this.#bodies.hold(record));
  }

  /** Puts a record whose body is already handled (held, or on disk) in every index. */
  #indexRecord(article: ArticleRecord): ArticleRecord {
    this.#indexMaps(article);
    this.#recent.insert(article);
    this.#updated.insert(article);
    if (article.status === 'published') {
      this.#publishedList(article.section).insert(article);
      this.#publishedList('*').insert(article);
      for (const key of termKeys(article)) this.#publishedList(key).insert(article);
      this.#countPublished(article);
    } else {
      this.#statusList(article.status).insert(article);
    }
    return article;
  }

  /** A published article's share of the month summaries and of the odd-dates count (kept beside the sorted lists). */
  #countPublished(article: ArticleRecord): void {
    if (!CANONICAL_DATE.test(sortDate(article))) this.#oddDates++;
    const period = articlePeriod(article);
    let entry = this.#periods.get(period);
    if (!entry) this.#periods.set(period, (entry = { count: 0, lastmod: '', stale: false }));
    entry.count++;
    if (article.updatedAt > entry.lastmod) entry.lastmod = article.updatedAt;
  }

  #uncountPublished(article: ArticleRecord): void {
    if (!CANONICAL_DATE.test(sortDate(article))) this.#oddDates--;
    const period = articlePeriod(article);
    const entry = this.#periods.get(period);
    if (!entry) return;
    if (--entry.count === 0) this.#periods.delete(period);
    // The newest change left the month: which one is newest now is looked up when asked.
    else if (article.updatedAt >= entry.lastmod) entry.stale = true;
  }

  #unindex(article: ArticleRecord): void {
    this.#bodies.freeze(article);
    this.#byId.delete(article.id);
    if (this.#bySlug.get(article.slug)?.id === article.id) this.#bySlug.delete(article.slug);
    if (article.origin) {
      this.#byOrigin.delete(`${article.origin.sourceId}\u0000${article.origin.guid}`);
      if (article.origin.canonicalUrl) this.#byCanonical.delete(article.origin.canonicalUrl);
    }
    this.#text.remove(article.id);
    this.#recent.remove(article);
    this.#updated.remove(article);
    if (article.status === 'published') {
      this.#publishedList(article.section).remove(article);
      this.#publishedList('*').remove(article);
      for (const key of termKeys(article)) this.#publishedList(key).remove(article);
      this.#uncountPublished(article);
    } else {
      this.#statusList(article.status).remove(article);
    }
  }

  #sorted(sort: ArticleSort): SortedList<ArticleRecord> {
    return sort === 'updated' ? this.#updated : this.#recent;
  }

  /**
   * Candidates for a filter: the narrowest prebuilt list that contains every match. A date range on
   * published articles is cut out of the sorted list by binary search (the search worker asks for a
   * day or a month at a time: scanning 100,000 articles for it blocked the event loop for tens of ms).
   */
  #candidates(
    filter: ArticleFilter,
    sort: ArticleSort,
  ): { list: SortedList<ArticleRecord> | readonly ArticleRecord[]; exact: boolean; start?: number; end?: number } {
    const onlyPublished = filter.statuses?.length === 1 && filter.statuses[0] === 'published';
    if (sort === 'recent' && onlyPublished) {
      const key = listKeyOf(filter);
      const list = this.#publishedBySection.get(key) ?? new SortedList(byRecent);
      // The list answers the filter field it is keyed by; any other one is checked article by article.
      const keyed =
        filter.tag !== undefined ? { tag: undefined } : filter.author !== undefined ? { author: undefined } : { section: undefined };
      const rest = { ...filter, ...keyed, statuses: undefined, dateFrom: undefined, dateTo: undefined };
      const exact = Object.values(rest).every((v) => v === undefined);
      const from = bound(filter.dateFrom, false);
      const to = bound(filter.dateTo, true);
      if (!from && !to) return { list, exact };
      // Newest first: the range starts at the first article not after `to` and ends before the first one before `from`.
      const start = to ? list.firstIndex((a) => sortDate(a) <= to) : 0;
      const end = from ? list.firstIndex((a) => sortDate(a) < from) : list.length;
      // Dates are compared as stored (ISO strings, as the list is sorted): exact when every published
      // date is in toISOString's form (counted and listed by position, without a pass over the range),
      // else the matcher checks each one.
      if (exact && this.#oddDates === 0) return { list, exact: true, start, end: Math.max(start, end) };
      return { list: list.slice(start, Math.max(start, end)), exact: false };
    }
    const status = filter.statuses?.length === 1 ? filter.statuses[0] : undefined;
    if (sort === 'recent' && status) {
      const list = this.#byStatus.get(status) ?? new SortedList(byRecent);
      return { list, exact: Object.values({ ...filter, statuses: undefined }).every((v) => v === undefined) };
    }
    return { list: this.#sorted(sort), exact: false };
  }

  async get(id: string, options?: ArticleRead) {
    return this.#withBody(this.#byId.get(id), options);
  }

  async getBySlug(slug: string, options?: ArticleRead) {
    return this.#withBody(this.#bySlug.get(slug), options);
  }

  async #withBody(record: ArticleRecord | undefined, options: ArticleRead | undefined) {
    if (record && options?.body) await this.#bodies.load(record.id);
    return record;
  }

  async list(filter: ArticleFilter, page: Page, sort: ArticleSort = 'recent') {
    const { list, exact, start = 0, end = list.length } = this.#candidates(filter, sort);
    if (exact) return list.slice(start + page.offset, Math.min(end, start + page.offset + page.limit));
    const out: ArticleRecord[] = [];
    const matches = articleMatcher(filter);
    let skipped = 0;
    for (const article of list) {
      if (!matches(article)) continue;
      if (skipped < page.offset) {
        skipped++;
        continue;
      }
      out.push(article);
      if (out.length >= page.limit) break;
    }
    return out;
  }

  async periods() {
    const out: ArticlePeriod[] = [];
    for (const [period, entry] of this.#periods) {
      if (entry.stale) {
        // Only this month's articles: the date range is cut out of the published list by binary search.
        const list = await this.list({ statuses: ['published'], ...periodRange(period) }, { offset: 0, limit: Infinity });
        entry.lastmod = '';
        for (const article of list)
          if (articlePeriod(article) === period && article.updatedAt > entry.lastmod) entry.lastmod = article.updatedAt;
        entry.stale = false;
      }
      out.push({ period, lastmod: entry.lastmod, count: entry.count });
    }
    return out.sort((a, b) => (a.period < b.period ? 1 : -1));
  }

  async terms(kind: TermKind): Promise<TermCount[]> {
    const prefix = `${kind}:`;
    const out: TermCount[] = [];
    for (const [key, list] of this.#publishedBySection) {
      if (!key.startsWith(prefix) || list.length === 0) continue;
      const slug = key.slice(prefix.length);
      const newest = list.slice(0, 1)[0]!;
      const name = kind === 'author' ? newest.authorName : (newest.tags.find((tag) => slugifyTerm(tag) === slug) ?? slug);
      out.push({ slug, name, count: list.length });
    }
    return out.sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
  }

  async count(filter: ArticleFilter) {
    const { list, exact, start = 0, end = list.length } = this.#candidates(filter, 'recent');
    if (exact) return end - start;
    let n = 0;
    const matches = articleMatcher(filter);
    for (const article of list) if (matches(article)) n++;
    return n;
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
      const article = this.#byId.get(id);
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

  async stats(): Promise<ArticleStats> {
    const stats = { totalArticles: 0, published: 0, drafts: 0, scheduled: 0, archived: 0 };
    for (const article of this.#byId.values()) {
      stats.totalArticles++;
      if (article.status === 'published') stats.published++;
      else if (article.status === 'draft') stats.drafts++;
      else if (article.status === 'scheduled') stats.scheduled++;
      else stats.archived++;
    }
    return stats;
  }

  async slugExists(slug: string, exceptId?: string) {
    const found = this.#bySlug.get(slug);
    return found !== undefined && found.id !== exceptId;
  }

  async findByOrigin(sourceId: string, guid: string) {
    return this.#byOrigin.get(`${sourceId}\u0000${guid}`);
  }

  async findByCanonicalUrl(url: string) {
    return this.#byCanonical.get(url);
  }

  async listDue(now: string) {
    const due: ArticleRecord[] = [];
    for (const article of this.#byStatus.get('scheduled') ?? []) {
      if (article.scheduledFor && new Date(article.scheduledFor).toISOString() <= now) due.push(article);
    }
    return due;
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
    const current = this.#byId.get(id);
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
    this.#indexRecord(this.#bodies.detach(stored));
  }

  async #write(id: string): Promise<void> {
    if (this.#readOnly) throw new Error('The store was opened read-only');
    this.#version.data.version++;
    await this.#version.write();
    const article = this.#byId.get(id);
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
      if (!this.#byId.has(id)) this.#files.delete(id);
      return;
    }
    file.data = article;
    await file.write();
  }

  async insert(article: ArticleRecord) {
    if (this.#readOnly) throw new Error('The store was opened read-only');
    if (this.#byId.has(article.id)) throw new Error(`Article ${article.id} exists`);
    this.#index(structuredClone(article));
    await this.#persist(article.id);
  }

  async insertMany(articles: readonly ArticleRecord[]) {
    if (this.#readOnly) throw new Error('The store was opened read-only');
    const ids = new Set<string>();
    for (const { id } of articles) {
      if (this.#byId.has(id) || ids.has(id)) throw new Error(`Article ${id} exists`);
      ids.add(id);
    }
    for (const article of articles) this.#index(structuredClone(article));
    // One file per article, many written at a time (the hashed folders spread them).
    await inPool([...ids], 64, (id) => this.#persist(id));
  }

  async replace(article: ArticleRecord) {
    const old = this.#byId.get(article.id);
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
    const old = this.#byId.get(article.id);
    if (!old) return undefined;
    if ((old.version ?? 1) !== expectedVersion) return { conflict: old };
    if (this.#readOnly) throw new Error('The store was opened read-only');
    const saved = this.#swap(old, article);
    await this.#persist(article.id);
    return { saved };
  }

  async publishIfScheduled(id: string, now: string) {
    const article = this.#byId.get(id);
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
    const article = this.#byId.get(id);
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
    await writeListingSnapshot(this.#dir, this.#version.data.version, this.#byId.values());
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
