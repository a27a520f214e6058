/** Which listing files and feeds read differently between a published list before and after a batch of article changes. */
import type { Section } from '../../schemas/common.ts';
import type { ArticleFilter, ArticleRecord } from '../../schemas/article.ts';
import type { Store } from '../../store/types.ts';
import type { ArticleChange } from '../runtime.ts';
import { toSummary } from '../articles.ts';
import { countListingPages, listingSlice } from '../../lib/pagination.ts';
import { FEED_SIZE, feedFingerprint } from './feeds.ts';

export const isPublic = (article: ArticleRecord | undefined): article is ArticleRecord => article?.status === 'published';

/** Newest first, as the store's 'recent' order: published date (else last update), then id. */
function byRecent(a: ArticleRecord, b: ArticleRecord): number {
  const da = a.publishedAt ?? a.updatedAt;
  const db = b.publishedAt ?? b.updatedAt;
  return da < db ? 1 : da > db ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** The list as it was before the changes, rebuilt from the list after them. */
export function listBefore(
  after: readonly ArticleRecord[],
  changes: readonly ArticleChange[],
  inScope: (a: ArticleRecord) => boolean,
): ArticleRecord[] {
  const changed = new Set(changes.map((c) => (c.after ?? c.before)!.id));
  const list = after.filter((a) => !changed.has(a.id));
  for (const { before } of changes) if (isPublic(before) && inScope(before)) list.push(before);
  return list.sort(byRecent);
}

/**
 * A section's published list, newest first: an array, or a window of it whose other positions stand
 * for articles that are the same before and after a change (see sectionLists).
 */
export type SectionList = {
  readonly length: number;
  at(index: number): ArticleRecord | undefined;
  slice(start?: number, end?: number): ArticleRecord[];
};

/**
 * What a listing file's HTML is made of, as a string: its cards plus, on page 1, the page count and,
 * on an archive file, whether it is the newest one. Undefined when the file does not exist.
 */
export function listingFileFingerprint(
  list: SectionList,
  total: number,
  file: number,
  size: number,
  fingerprint: (a: ArticleRecord) => string,
): string | undefined {
  const slice = listingSlice(list.length, file, size);
  if (!slice) return undefined;
  return listingCardsFingerprint(list.slice(slice.offset, slice.offset + slice.limit), total, file, fingerprint);
}

/** listingFileFingerprint from the file's own cards (newest first), the section's page count and the file's number. */
export function listingCardsFingerprint(
  cards: readonly ArticleRecord[],
  total: number,
  file: number,
  fingerprint: (a: ArticleRecord) => string,
): string {
  const shown = cards.map(fingerprint).join('\n');
  return file === 1 ? `${total}\n${shown}` : `${file === total}\n${shown}`;
}

/** Stand for the articles outside sectionLists' window, which are the same before and after the changes. */
export const SAME_NEWER = Object.freeze({}) as ArticleRecord;
export const SAME_OLDER = Object.freeze({}) as ArticleRecord;

/**
 * `window` at position `newer` of a list `newer + window.length + older` long, the other positions
 * held by placeholders: nothing is allocated for them (at 100,000 articles a section is 12,500 long,
 * and padding real arrays made most of the garbage a burst of saves left).
 */
function windowedList(window: readonly ArticleRecord[], newer: number, older: number): SectionList {
  const length = newer + window.length + older;
  const at = (index: number) =>
    index < 0 || index >= length
      ? undefined
      : index < newer
        ? SAME_NEWER
        : index < newer + window.length
          ? window[index - newer]
          : SAME_OLDER;
  return {
    length,
    at,
    slice(start = 0, end = length) {
      const out: ArticleRecord[] = [];
      for (let i = Math.max(0, start); i < Math.min(end, length); i++) out.push(at(i)!);
      return out;
    },
  };
}

/**
 * A section's published list before and after the changes (newest first, full length), read only
 * around the changed articles: the articles newer and older than all of them are the same in both
 * lists, so they are left out and stood for by placeholders, which compare equal in every
 * fingerprint (placeholders for the newer ones only when the count did not change, since otherwise
 * the files shift under them). Listing the whole section on every save grew with the archive
 * (docs/performance.md, 2026-11-25); this reads a few positions by count (the store answers a published date range
 * by binary search) and lists only the window. Falls back to the whole section whenever a check of
 * the window fails (a date the store could not place by position).
 */
export async function sectionLists(
  store: Store,
  section: Section,
  changes: readonly ArticleChange[],
): Promise<{ before: SectionList; after: SectionList }> {
  return scopedLists(store, { statuses: ['published'], section }, (a) => a.section === section, changes);
}

/**
 * sectionLists for any published listing: the store filter that lists it (a section, a tag, an
 * author) and the same test on one record.
 */
export async function scopedLists(
  store: Store,
  scope: ArticleFilter,
  inScope: (a: ArticleRecord) => boolean,
  changes: readonly ArticleChange[],
): Promise<{ before: SectionList; after: SectionList }> {
  const inSection = (a: ArticleRecord | undefined): a is ArticleRecord => isPublic(a) && inScope(a);
  const filter = { ...scope, statuses: ['published'] as const };
  const whole = async () => {
    const after = await store.articles.list(filter, { offset: 0, limit: await store.articles.count(filter) }, 'recent');
    return { before: listBefore(after, changes, inScope), after };
  };
  const afters = changes.map((c) => c.after).filter(inSection);
  const befores = changes.map((c) => c.before).filter(inSection);
  const margin = afters.length + befores.length + 1;
  const count = await store.articles.count(filter);
  const countBefore = count - afters.length + befores.length;
  const dateOf = (a: ArticleRecord) => a.publishedAt ?? a.updatedAt;
  // Articles older than every changed one: at least those the store dates before it, less the changed ones.
  let older = count;
  // ...and newer than every changed one (only used when the count stays).
  let newer = countBefore === count ? count : 0;
  for (const article of [...afters, ...befores]) {
    const time = Date.parse(dateOf(article));
    if (!Number.isFinite(time)) return whole();
    const atOrAfter = await store.articles.count({ ...filter, dateFrom: new Date(time).toISOString() });
    older = Math.min(older, count - atOrAfter - margin);
    if (newer > 0)
      newer = Math.min(newer, (await store.articles.count({ ...filter, dateFrom: new Date(time + 1).toISOString() })) - margin);
  }
  older = Math.max(0, older);
  newer = Math.max(0, newer);
  const window = await store.articles.list(filter, { offset: newer, limit: Math.max(0, count - older - newer) }, 'recent');
  // The window must hold every changed article, and its edges (where placeholders begin) must be unchanged articles beyond all of them.
  const changed = new Set(changes.map((c) => (c.after ?? c.before)!.id));
  const ids = new Set(window.map((a) => a.id));
  const first = window[0];
  const last = window.at(-1);
  const inside = (a: ArticleRecord) =>
    (newer === 0 || (first !== undefined && !changed.has(first.id) && byRecent(first, a) < 0)) &&
    (older === 0 || (last !== undefined && !changed.has(last.id) && byRecent(a, last) < 0));
  if (window.length !== count - older - newer || !afters.every((a) => ids.has(a.id) && inside(a)) || !befores.every(inside)) return whole();
  const beforeWindow = listBefore(window, changes, inScope);
  return { before: windowedList(beforeWindow, newer, older), after: windowedList(window, newer, older) };
}

/**
 * Listing files (1 = page 1, n >= 2 = archive file n) whose HTML differs between two versions of a
 * section's list (newest first). A file's HTML is its cards plus, on page 1, the page count and, on
 * an archive file, whether it is the newest one. Files are filled from the oldest article, so only
 * the files from the oldest difference onwards can change: a new article touches page 1 and the
 * newest archive file (and the one before it when a new file opens), whatever the archive's size.
 */
export function changedListingFiles(
  before: SectionList,
  after: SectionList,
  size: number,
  fingerprint: (a: ArticleRecord) => string,
): number[] {
  const totalBefore = countListingPages(before.length, size);
  const totalAfter = countListingPages(after.length, size);
  // The oldest position (counted from the oldest article) at which the lists differ.
  let first = Math.max(0, Math.min(before.length, after.length) - size);
  for (let j = 0; j < first; j++) {
    const a = before.at(before.length - 1 - j)!;
    const b = after.at(after.length - 1 - j)!;
    if (a !== b && fingerprint(a) !== fingerprint(b)) {
      first = j;
      break;
    }
  }
  const fileOf = (list: SectionList, total: number, file: number) => listingFileFingerprint(list, total, file, size, fingerprint);
  const candidates = new Set<number>([1, totalBefore, totalAfter]);
  for (let file = Math.floor(first / size) + 2; file <= Math.max(totalBefore, totalAfter); file++) candidates.add(file);
  return [...candidates].sort((a, b) => a - b).filter((file) => fileOf(before, totalBefore, file) !== fileOf(after, totalAfter, file));
}

/** Whether a feed's items (the first FEED_SIZE of a list) read differently; an article left as it was is the same object in both lists. */
export function feedChanged(before: SectionList, after: SectionList): boolean {
  for (let i = 0; i < FEED_SIZE; i++) {
    const a = before.at(i);
    const b = after.at(i);
    if (a !== b && (a === undefined || b === undefined || feedFingerprint(a) !== feedFingerprint(b))) return true;
  }
  return false;
}

/** What a listing card shows: the loader hands the view exactly the summary. */
export const cardFingerprint = (article: ArticleRecord) => JSON.stringify(toSummary(article));

/** What a tag or author listing card shows: the card, and the tags its page's heading may take its spelling from. */
export const termCardFingerprint = (article: ArticleRecord) => `${cardFingerprint(article)}\n${JSON.stringify(article.tags ?? [])}`;

/** What a tag or author listing file is made of: a section file's, with termCardFingerprint, and on page 1 the article count it prints. */
export function termListingFingerprint(cards: readonly ArticleRecord[], total: number, file: number, count: number): string {
  const cardsPart = listingCardsFingerprint(cards, total, file, termCardFingerprint);
  return file === 1 ? `${cardsPart}\n#${count}` : cardsPart;
}
