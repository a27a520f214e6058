/** The articles' listing fields in memory, with indexes kept sorted so a write costs O(log n) and listings never scan. */
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
import type { ArticleSort, Page } from '../types.ts';
import { articleMatcher, bound, byRecent, CANONICAL_DATE, sortDate } from './article-filter.ts';
import { SortedList } from './sorted-list.ts';

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

/** Lookups by id, slug and origin, the sorted lists and the month counts of the articles; no file is read or written here. */
export class ArticleIndexes {
  /** Read by the repository too (a get, a write's existence check, the listing snapshot). */
  readonly byId = new Map<string, ArticleRecord>();
  readonly bySlug = new Map<string, ArticleRecord>();
  readonly #byOrigin = new Map<string, ArticleRecord>();
  readonly #byCanonical = new Map<string, ArticleRecord>();
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

  constructor(records: Iterable<ArticleRecord>) {
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

  #publishedList(section: string): SortedList<ArticleRecord> {
    return listIn(this.#publishedBySection, section);
  }

  #statusList(status: string): SortedList<ArticleRecord> {
    return listIn(this.#byStatus, status);
  }

  #indexMaps(article: ArticleRecord): void {
    this.byId.set(article.id, article);
    this.bySlug.set(article.slug, article);
    if (article.origin) {
      this.#byOrigin.set(`${article.origin.sourceId}\u0000${article.origin.guid}`, article);
      if (article.origin.canonicalUrl) this.#byCanonical.set(article.origin.canonicalUrl, article);
    }
  }

  /** Puts a record whose body is already handled (held, or on disk) in every index. */
  indexRecord(article: ArticleRecord): ArticleRecord {
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

  /** Takes a record out of the lookups, the sorted lists and the month counts. */
  unindex(article: ArticleRecord): void {
    this.byId.delete(article.id);
    if (this.bySlug.get(article.slug)?.id === article.id) this.bySlug.delete(article.slug);
    if (article.origin) {
      this.#byOrigin.delete(`${article.origin.sourceId}\u0000${article.origin.guid}`);
      if (article.origin.canonicalUrl) this.#byCanonical.delete(article.origin.canonicalUrl);
    }
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

  async stats(): Promise<ArticleStats> {
    const stats = { totalArticles: 0, published: 0, drafts: 0, scheduled: 0, archived: 0 };
    for (const article of this.byId.values()) {
      stats.totalArticles++;
      if (article.status === 'published') stats.published++;
      else if (article.status === 'draft') stats.drafts++;
      else if (article.status === 'scheduled') stats.scheduled++;
      else stats.archived++;
    }
    return stats;
  }

  async slugExists(slug: string, exceptId?: string) {
    const found = this.bySlug.get(slug);
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
}
