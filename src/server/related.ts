/**
 * Related reading under an article (issue 35): up to four published articles sharing its tags, then
 * its section, then the nearest in time before it. Candidates come only from articles published
 * before it, a few per tag, section and site-wide ("windows"), so a publish never changes the related
 * list of an older article, and the pages that show an article are found by looking a few positions
 * forward in the same lists (listShowingPages): both cost a few indexed reads, at any archive size.
 */
import type { ArticleFilter, ArticleRecord } from '../schemas/article.ts';
import { slugifyTags, type TagRules } from '../schemas/taxonomy.ts';
import type { Store } from '../store/types.ts';

/** Articles shown under an article. */
export const RELATED_COUNT = 4;
/** Articles each window offers: as many as are shown, so an article is in a window only while it could be shown. */
export const RELATED_WINDOW = RELATED_COUNT;
/** Extra rows read past a window, for articles sharing its date (told apart by id). */
const TIE_SLACK = 4;
/** Tags of an article that give windows: the first ones (an ingested item may carry dozens). */
export const RELATED_TAG_LIMIT = 8;

const dateOf = (a: ArticleRecord) => a.publishedAt ?? a.updatedAt;

/** Newest first, as the store's 'recent' order: published date (else last update), then id. */
export function compareRecent(a: ArticleRecord, b: ArticleRecord): number {
  const da = dateOf(a);
  const db = dateOf(b);
  return da < db ? 1 : da > db ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** The tag slugs of an article that count for related reading: not hidden, the first RELATED_TAG_LIMIT. */
export function relatedTagSlugs(article: ArticleRecord, rules: TagRules): string[] {
  return slugifyTags(article.tags)
    .filter((slug) => !rules.hidden[slug] && !rules.merged[slug])
    .slice(0, RELATED_TAG_LIMIT);
}

/** The store filters of windows by tag slugs, plus the article's section and the whole site. */
function windowsOf(tags: readonly string[], article: ArticleRecord): ArticleFilter[] {
  const published = { statuses: ['published'] as const };
  return [...tags.map((tag) => ({ ...published, tag })), { ...published, section: article.section }, { ...published }];
}

/** The windows an article's related reading is drawn from: one per counted tag, its section, and the whole site. */
export function relatedWindows(article: ArticleRecord, rules: TagRules): ArticleFilter[] {
  return windowsOf(relatedTagSlugs(article, rules), article);
}

/** The windows an article is in: every tag it carries (not only the counted ones of its own list), its section, the site. */
function memberWindows(article: ArticleRecord, rules: TagRules): ArticleFilter[] {
  return windowsOf(
    slugifyTags(article.tags).filter((slug) => !rules.hidden[slug] && !rules.merged[slug]),
    article,
  );
}

/**
 * Ranks candidates for `article` (pure): most shared tags first, then the same section, then the
 * newest; never the article itself; at most RELATED_COUNT.
 */
export function rankRelated(article: ArticleRecord, candidates: Iterable<ArticleRecord>, rules: TagRules): ArticleRecord[] {
  const tags = new Set(relatedTagSlugs(article, rules));
  const scored = new Map<string, { record: ArticleRecord; shared: number; sameSection: number }>();
  for (const record of candidates) {
    if (record.id === article.id || record.status !== 'published' || scored.has(record.id)) continue;
    const shared = relatedTagSlugs(record, rules).filter((slug) => tags.has(slug)).length;
    scored.set(record.id, { record, shared, sameSection: record.section === article.section ? 1 : 0 });
  }
  return [...scored.values()]
    .sort((a, b) => b.shared - a.shared || b.sameSection - a.sameSection || compareRecent(a.record, b.record))
    .slice(0, RELATED_COUNT)
    .map((entry) => entry.record);
}

/** How many articles of a window share `article`'s date (a feed's burst may give dozens the same second). */
function countSameDate(store: Store, filter: ArticleFilter, article: ArticleRecord): Promise<number> {
  return store.articles.count({ ...filter, dateFrom: dateOf(article), dateTo: dateOf(article) });
}

/** The first RELATED_WINDOW articles of a window strictly older than `article` (after it in the newest-first order). */
async function listOlder(store: Store, filter: ArticleFilter, article: ArticleRecord): Promise<ArticleRecord[]> {
  const to = { ...filter, dateTo: dateOf(article) };
  const read = (limit: number) => store.articles.list(to, { offset: 0, limit }, 'recent');
  const limit = RELATED_WINDOW + TIE_SLACK;
  let rows = await read(limit);
  let older = rows.filter((row) => compareRecent(article, row) < 0);
  // Articles sharing its date (ordered by id) filled the rows: read past every one of them.
  if (older.length < RELATED_WINDOW && rows.length === limit) {
    rows = await read((await countSameDate(store, filter, article)) + RELATED_WINDOW);
    older = rows.filter((row) => compareRecent(article, row) < 0);
  }
  return older.slice(0, RELATED_WINDOW);
}

/** The last RELATED_WINDOW articles of a window strictly newer than `article` (the nearest ones after it in time). */
async function listNewer(store: Store, filter: ArticleFilter, article: ArticleRecord): Promise<ArticleRecord[]> {
  const from = { ...filter, dateFrom: dateOf(article) };
  const count = await store.articles.count(from);
  const read = async (take: number) => {
    const rows = await store.articles.list(from, { offset: Math.max(0, count - take), limit: take }, 'recent');
    return { all: rows.length === count, newer: rows.filter((row) => row.id !== article.id && compareRecent(row, article) < 0) };
  };
  let rows = await read(RELATED_WINDOW + TIE_SLACK);
  // As in listOlder: the articles sharing its date may hide the newer ones.
  if (rows.newer.length < RELATED_WINDOW && !rows.all) rows = await read((await countSameDate(store, filter, article)) + RELATED_WINDOW);
  return rows.newer.slice(-RELATED_WINDOW);
}

/** The related reading of a published article, read from the store: a few indexed reads per window. */
export async function listRelated(store: Store, article: ArticleRecord, rules: TagRules): Promise<ArticleRecord[]> {
  const candidates: ArticleRecord[] = [];
  for (const filter of relatedWindows(article, rules)) candidates.push(...(await listOlder(store, filter, article)));
  return rankRelated(article, candidates, rules);
}

/**
 * The articles whose related reading may show `article` (as it is, or as it was before a change): it
 * can be in another's list only from one of that one's windows, so only while fewer than a window's
 * worth of the same tag (or section, or site) lie between them: the nearest RELATED_WINDOW newer
 * articles of each of its windows. At most a window per tag, section and site, whatever the archive.
 */
export async function listShowingPages(store: Store, article: ArticleRecord, rules: TagRules): Promise<ArticleRecord[]> {
  const found = new Map<string, ArticleRecord>();
  for (const filter of memberWindows(article, rules)) for (const row of await listNewer(store, filter, article)) found.set(row.id, row);
  return [...found.values()];
}

/** What a related card shows of an article, and what puts it in a window: a change to it re-renders the pages showing it. */
export function relatedFingerprint(article: ArticleRecord | undefined, rules: TagRules): string {
  if (article?.status !== 'published') return '';
  const { slug, title, heroImage, section, publishedAt, updatedAt, readingTime, authorName } = article;
  const tags = slugifyTags(article.tags).filter((tag) => !rules.hidden[tag] && !rules.merged[tag]);
  return JSON.stringify([slug, title, heroImage ?? '', section, publishedAt ?? updatedAt, readingTime, authorName, tags]);
}

/**
 * Related reading for every published article at once, from the whole newest-first list in memory
 * (the incremental rebuild's fingerprints): the same windows and ranking as listRelated.
 */
export function computeAllRelated(published: readonly ArticleRecord[], rules: TagRules): Map<string, ArticleRecord[]> {
  const lists = new Map<string, ArticleRecord[]>();
  const positions = new Map<string, Map<string, number>>();
  const keysOf = (article: ArticleRecord, tags: readonly string[]) => [
    ...tags.map((tag) => `tag:${tag}`),
    `section:${article.section}`,
    '*',
  ];
  // Every tag's list holds each article carrying it, as the store's tag filter does.
  for (const article of published) {
    for (const key of keysOf(article, slugifyTags(article.tags))) {
      let list = lists.get(key);
      if (!list) {
        lists.set(key, (list = []));
        positions.set(key, new Map());
      }
      positions.get(key)!.set(article.id, list.length);
      list.push(article);
    }
  }
  const related = new Map<string, ArticleRecord[]>();
  for (const article of published) {
    const candidates: ArticleRecord[] = [];
    for (const key of keysOf(article, relatedTagSlugs(article, rules))) {
      const list = lists.get(key)!;
      const at = positions.get(key)!.get(article.id)!;
      candidates.push(...list.slice(at + 1, at + 1 + RELATED_WINDOW));
    }
    related.set(article.id, rankRelated(article, candidates, rules));
  }
  return related;
}
