/** Articles in articles.json, with in-memory indexes so listings never scan the whole collection. */
import type { ArticleFilter, ArticleRecord, ArticleStats } from '../../schemas/article.ts';
import type { ArticleRepository, ArticleSort, Page } from '../types.ts';
import type { JsonCollection } from './file.ts';
import { TextIndex, stripTags } from './text-index.ts';

export type ArticlesFile = { version: number; articles: ArticleRecord[] };

/** The date an article is listed by: published date, else last update. */
export function sortDate(article: ArticleRecord): string {
  return article.publishedAt ?? article.updatedAt;
}

function byRecent(a: ArticleRecord, b: ArticleRecord): number {
  const da = sortDate(a);
  const db = sortDate(b);
  return da < db ? 1 : da > db ? -1 : a.id < b.id ? 1 : -1;
}

function byUpdated(a: ArticleRecord, b: ArticleRecord): number {
  return a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : a.id < b.id ? 1 : -1;
}

/** Normalises an ISO date or date-time bound to a comparable ISO string. */
function bound(value: string | undefined, end: boolean): string | undefined {
  if (!value) return undefined;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return `${value}T${end ? '23:59:59.999' : '00:00:00.000'}Z`;
  return new Date(value).toISOString();
}

export function matchesFilter(article: ArticleRecord, filter: ArticleFilter): boolean {
  if (filter.section && article.section !== filter.section) return false;
  if (filter.statuses && !filter.statuses.includes(article.status)) return false;
  if (filter.isBreaking !== undefined && article.isBreaking !== filter.isBreaking) return false;
  if (filter.isEditorsPick !== undefined && article.isEditorsPick !== filter.isEditorsPick) return false;
  if (filter.source) {
    const needle = filter.source.toLowerCase();
    if (!(article.sourceLabel ?? '').toLowerCase().includes(needle)) return false;
  }
  const from = bound(filter.dateFrom, false);
  const to = bound(filter.dateTo, true);
  if (from || to) {
    const date = new Date(sortDate(article)).toISOString();
    if (from && date < from) return false;
    if (to && date > to) return false;
  }
  if (filter.search) {
    const needle = filter.search.toLowerCase();
    const haystack = [article.title, article.dek ?? '', article.authorName, article.sourceLabel ?? '', ...article.tags]
      .join('\n')
      .toLowerCase();
    if (!haystack.includes(needle)) return false;
  }
  return true;
}

export class LowdbArticles implements ArticleRepository {
  readonly #file: JsonCollection<ArticlesFile>;
  readonly #byId = new Map<string, ArticleRecord>();
  readonly #bySlug = new Map<string, ArticleRecord>();
  readonly #byOrigin = new Map<string, ArticleRecord>();
  readonly #byCanonical = new Map<string, ArticleRecord>();
  readonly #text = new TextIndex();
  /** Sorted views, rebuilt lazily after a write. */
  #recent: ArticleRecord[] | undefined;
  #updated: ArticleRecord[] | undefined;
  #publishedBySection: Map<string, ArticleRecord[]> | undefined;

  constructor(file: JsonCollection<ArticlesFile>) {
    this.#file = file;
    for (const article of file.data.articles) this.#index(article);
  }

  #index(article: ArticleRecord): void {
    this.#byId.set(article.id, article);
    this.#bySlug.set(article.slug, article);
    if (article.origin) {
      this.#byOrigin.set(`${article.origin.sourceId}\u0000${article.origin.guid}`, article);
      if (article.origin.canonicalUrl) this.#byCanonical.set(article.origin.canonicalUrl, article);
    }
    this.#text.add(article.id, {
      title: article.title,
      dek: article.dek,
      body: stripTags(article.bodyHtml),
      extra: [article.authorName, article.sourceLabel ?? '', ...article.tags].join(' '),
    });
    this.#invalidate();
  }

  #unindex(article: ArticleRecord): void {
    this.#byId.delete(article.id);
    if (this.#bySlug.get(article.slug)?.id === article.id) this.#bySlug.delete(article.slug);
    if (article.origin) {
      this.#byOrigin.delete(`${article.origin.sourceId}\u0000${article.origin.guid}`);
      if (article.origin.canonicalUrl) this.#byCanonical.delete(article.origin.canonicalUrl);
    }
    this.#text.remove(article.id);
    this.#invalidate();
  }

  #invalidate(): void {
    this.#recent = undefined;
    this.#updated = undefined;
    this.#publishedBySection = undefined;
  }

  #sorted(sort: ArticleSort): ArticleRecord[] {
    if (sort === 'updated') return (this.#updated ??= [...this.#byId.values()].sort(byUpdated));
    return (this.#recent ??= [...this.#byId.values()].sort(byRecent));
  }

  /** Candidates for a filter: the narrowest prebuilt list that contains every match. */
  #candidates(filter: ArticleFilter, sort: ArticleSort): { list: ArticleRecord[]; exact: boolean } {
    const onlyPublished = filter.statuses?.length === 1 && filter.statuses[0] === 'published';
    if (sort === 'recent' && onlyPublished) {
      if (!this.#publishedBySection) {
        const map = new Map<string, ArticleRecord[]>([['*', []]]);
        for (const article of this.#sorted('recent')) {
          if (article.status !== 'published') continue;
          map.get('*')!.push(article);
          let list = map.get(article.section);
          if (!list) map.set(article.section, (list = []));
          list.push(article);
        }
        this.#publishedBySection = map;
      }
      const list = this.#publishedBySection.get(filter.section ?? '*') ?? [];
      const rest = { ...filter, section: undefined, statuses: undefined };
      const exact = Object.values(rest).every((v) => v === undefined);
      return { list, exact };
    }
    return { list: this.#sorted(sort), exact: false };
  }

  async get(id: string) {
    return this.#byId.get(id);
  }

  async getBySlug(slug: string) {
    return this.#bySlug.get(slug);
  }

  async list(filter: ArticleFilter, page: Page, sort: ArticleSort = 'recent') {
    const { list, exact } = this.#candidates(filter, sort);
    if (exact) return list.slice(page.offset, page.offset + page.limit);
    const out: ArticleRecord[] = [];
    let skipped = 0;
    for (const article of list) {
      if (!matchesFilter(article, filter)) continue;
      if (skipped < page.offset) {
        skipped++;
        continue;
      }
      out.push(article);
      if (out.length >= page.limit) break;
    }
    return out;
  }

  async count(filter: ArticleFilter) {
    const { list, exact } = this.#candidates(filter, 'recent');
    if (exact) return list.length;
    let n = 0;
    for (const article of list) if (matchesFilter(article, filter)) n++;
    return n;
  }

  /** Full-text search: relevance, then recency. */
  async search(query: string, filter: ArticleFilter, page: Page) {
    const scores = this.#text.query(query);
    const matches: ArticleRecord[] = [];
    for (const id of scores.keys()) {
      const article = this.#byId.get(id);
      if (article && matchesFilter(article, filter)) matches.push(article);
    }
    matches.sort((a, b) => scores.get(b.id)! - scores.get(a.id)! || byRecent(a, b));
    return { items: matches.slice(page.offset, page.offset + page.limit), total: matches.length };
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
    for (const article of this.#byId.values()) {
      if (article.status === 'scheduled' && article.scheduledFor && new Date(article.scheduledFor).toISOString() <= now) due.push(article);
    }
    return due;
  }

  async #persist(): Promise<void> {
    this.#file.data.version++;
    this.#file.data.articles = [...this.#byId.values()];
    await this.#file.write();
  }

  async insert(article: ArticleRecord) {
    if (this.#byId.has(article.id)) throw new Error(`Article ${article.id} exists`);
    this.#index(structuredClone(article));
    await this.#persist();
  }

  async replace(article: ArticleRecord) {
    const old = this.#byId.get(article.id);
    if (!old) return false;
    this.#swap(old, article);
    await this.#persist();
    return true;
  }

  /** Swaps a record in, with the version after the old one's (issue 14: the store owns versions). */
  #swap(old: ArticleRecord, article: ArticleRecord): ArticleRecord {
    const next = { ...structuredClone(article), version: (old.version ?? 1) + 1 };
    this.#unindex(old);
    this.#index(next);
    return next;
  }

  async replaceIfVersion(article: ArticleRecord, expectedVersion: number) {
    // Check and swap run synchronously: no other write can slip in between.
    const old = this.#byId.get(article.id);
    if (!old) return undefined;
    if ((old.version ?? 1) !== expectedVersion) return { conflict: old };
    const saved = this.#swap(old, article);
    await this.#persist();
    return { saved };
  }

  async publishIfScheduled(id: string, now: string) {
    const article = this.#byId.get(id);
    if (!article || article.status !== 'scheduled') return undefined;
    const { scheduledFor: _dropped, ...rest } = article;
    const published: ArticleRecord = { ...rest, status: 'published', publishedAt: article.publishedAt ?? now, updatedAt: now, version: (article.version ?? 1) + 1 };
    this.#unindex(article);
    this.#index(published);
    await this.#persist();
    return published;
  }

  async delete(id: string) {
    const article = this.#byId.get(id);
    if (!article) return false;
    this.#unindex(article);
    await this.#persist();
    return true;
  }

  async version() {
    return this.#file.data.version;
  }
}
