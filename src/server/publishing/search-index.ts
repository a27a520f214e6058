/**
 * The Pagefind search index in tiers, like an LSM tree: a small head bundle of today's articles that a
 * publish re-indexes, the current month up to yesterday, and one bundle per closed month that a publish
 * never touches; /pagefind/periods.json names the complete set, and a daily compaction folds the head
 * into its month by building the new bundles under new names and then swapping periods.json at once.
 * Today's articles are cut, oldest first, into blocks of HEAD_MAX: the head is the newest block, so a
 * publish re-indexes at most HEAD_MAX pages (and, when the head fills, one full block) at any size.
 * This file is the plan (bundle names, which bundle an article is in, job paths); search-periods.ts and
 * search-indexer.ts put it on disk.
 */

/**
 * Bundle names: `YYYY-MM` (a closed month, all its articles), `YYYY-MM-wN` (the Nth week of a closed
 * month of more than MONTH_IN_WEEKS_FROM articles: days 1-7, 8-14, 15-21, 22-28, 29-31), `YYYY-MM-DD`
 * (the current month from its first day through DD, yesterday), `YYYY-MM-DD-bNNN` (the NNN-th full
 * block of HEAD_MAX articles of that day, today) and `head-YYYY-MM-DD` (the rest of today's articles,
 * and any dated later).
 */
export const BUNDLE = /^(?:\d{4}-\d{2}|\d{4}-\d{2}-w[1-5]|\d{4}-\d{2}-\d{2}|\d{4}-\d{2}-\d{2}-b\d{3}|head-\d{4}-\d{2}-\d{2})$/;
/**
 * A closed month of more articles than this is indexed as its weeks: an edit in it re-indexes a week
 * (about 200 pages at 10,000 articles, 2,000 at 100,000) instead of the month. Smaller months stay whole,
 * as every bundle costs a reader who searches the whole archive its own metadata and requests
 * (docs/performance.md, 2026-11-28 and 2026-11-29 entries on weeks).
 */
export const MONTH_IN_WEEKS_FROM = 400;
const MONTH_WEEK = /^(\d{4}-\d{2})-w([1-5])$/;
/**
 * Articles per block of today's tier (and at most in the head). The head's re-index is what a
 * publish waits for; a whole day in one head made that cost grow with the archive (docs/performance.md,
 * 2026-11-23 entry on search tiers). Small enough to index quickly, large enough that a day has few blocks.
 */
export const HEAD_MAX = 24;
export const DAY_BLOCK = /^(\d{4}-\d{2}-\d{2})-b\d{3}$/;
/** Job paths: re-index one bundle, compact (build the bundles the date asks for), or re-index them all. */
const BUNDLE_JOB = /^\/pagefind\/([a-z0-9-]+)$/;
export const COMPACT_JOB = '/pagefind/compact';
export const REINDEX_ALL_JOB = '/pagefind/all';

export type SearchJob = { kind: 'bundle'; bundle: string } | { kind: 'compact' } | { kind: 'all' };
/** What the plan needs of an article. */
export type Indexable = { slug: string; publishedAt?: string | undefined; updatedAt: string };

/** An instant as toISOString writes it (UTC), whose first ten characters are its UTC day. */
const UTC_ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z$/;

/**
 * What Pagefind reads of a page: the `<html>` tag (its language) and, in the element carrying
 * `data-pagefind-body`, the text, each element's name (where words break) and every tag with a
 * `data-pagefind-*` attribute whole (meta, filters, weights); the whole page when none carries it.
 * Other attributes (classes, an island's script URL) and scripts are left out: Pagefind does not read
 * them. Two renders of a page with the same part index the same, so a change to the footer, the header,
 * a style or the related reading leaves the search index as it is.
 */
export function indexedPart(html: string): string {
  const html_ = /<html\b[^>]*>/i.exec(html)?.[0] ?? '';
  const marker = html.indexOf('data-pagefind-body');
  const start = marker < 0 ? -1 : html.lastIndexOf('<', marker);
  const name = start < 0 ? undefined : /^<([a-zA-Z][a-zA-Z0-9-]*)/.exec(html.slice(start))?.[1];
  let body = html;
  if (name) {
    const tags = new RegExp(`<(/?)${name}\\b[^>]*>`, 'gi');
    tags.lastIndex = start;
    let depth = 0;
    for (let tag = tags.exec(html); tag; tag = tags.exec(html)) {
      depth += tag[1] ? -1 : 1;
      if (depth === 0) {
        body = html.slice(start, tags.lastIndex);
        break;
      }
    }
  }
  const indexed = body
    .replace(/<(script|style|template)\b[\s\S]*?<\/\1>/gi, '')
    .replace(/<(\/?[a-zA-Z][a-zA-Z0-9-]*)\b[^>]*>/g, (tag, tagName: string) => (tag.includes('data-pagefind') ? tag : `<${tagName}>`));
  return `${html_}\n${indexed}`;
}

/** The UTC day (YYYY-MM-DD) of an instant. */
export function dayOf(at: string | number | Date): string {
  // Stored dates are in toISOString's form: read off, not parsed (the plan dates every article).
  if (typeof at === 'string' && UTC_ISO.test(at)) return at.slice(0, 10);
  return new Date(at).toISOString().slice(0, 10);
}

/**
 * The bundle an article belongs in on `today` (a UTC day): a pure function of its date and the day, so
 * the server, `npm run rebuild` and `--full` agree. Today's (and future-dated) articles go in the head.
 */
export function bundleOf(article: Pick<Indexable, 'publishedAt' | 'updatedAt'>, today: string): string {
  const day = dayOf(article.publishedAt ?? article.updatedAt);
  if (day >= today) return `head-${today}`;
  if (day.slice(0, 7) < today.slice(0, 7)) return day.slice(0, 7);
  // The current month up to yesterday, named after its last day so the name changes when it grows.
  return dayBefore(today);
}

let lastDay = { today: '', before: '' };
/** The UTC day before `today` (the last one asked for is kept: a plan asks once per article). */
function dayBefore(today: string): string {
  if (lastDay.today !== today) lastDay = { today, before: dayOf(Date.parse(`${today}T00:00:00.000Z`) - 86_400_000) };
  return lastDay.before;
}

/** The week bundle of a closed month that a day (YYYY-MM-DD) belongs in when its month is indexed by weeks. */
export function weekOf(day: string): string {
  return `${day.slice(0, 7)}-w${Math.ceil(Number(day.slice(8, 10)) / 7)}`;
}

/** The month (YYYY-MM) a week bundle belongs to, or undefined for any other name. */
export function monthOfWeek(name: string): string | undefined {
  return MONTH_WEEK.exec(name)?.[1];
}

/** The publishedAt range (ISO, inclusive) a bundle covers; the head has no end. */
export function bundleRange(name: string): { from: string; to: string } {
  if (name.startsWith('head-')) return { from: `${name.slice(5)}T00:00:00.000Z`, to: '9999-12-31T23:59:59.999Z' };
  const week = MONTH_WEEK.exec(name);
  if (week) {
    const [year, month] = week[1]!.split('-').map(Number) as [number, number];
    const first = (Number(week[2]) - 1) * 7 + 1;
    const end = Math.min(Date.UTC(year, month - 1, first + 7), Date.UTC(year, month, 1));
    return { from: new Date(Date.UTC(year, month - 1, first)).toISOString(), to: new Date(end - 1).toISOString() };
  }
  const [year, month, day] = name.split('-').map(Number) as [number, number, number | undefined];
  const from = new Date(Date.UTC(year, month - 1, 1)).toISOString();
  const end = day === undefined ? Date.UTC(year, month, 1) : Date.UTC(year, month - 1, day + 1);
  return { from, to: new Date(end - 1).toISOString() };
}

/** Whether `name` is a bundle today's plan can hold (so re-indexing it alone keeps every article in one bundle). */
export function isBundleOfDay(name: string, today: string): boolean {
  if (name.startsWith('head-')) return name === `head-${today}`;
  const block = DAY_BLOCK.exec(name);
  if (block) return block[1] === today;
  if (name.length === 7) return name < today.slice(0, 7);
  const month = monthOfWeek(name);
  if (month) return month < today.slice(0, 7);
  return name === bundleOf({ publishedAt: bundleRange(name).to, updatedAt: '' }, today);
}

/** Whether `name` is part of today's tier (its head or one of its full blocks). */
export function isDayTier(name: string, today: string): boolean {
  return name === `head-${today}` || DAY_BLOCK.exec(name)?.[1] === today;
}

/** Newest first: the head, today's blocks (newest first), then the current month so far, then closed months. */
export function compareBundles(a: string, b: string): number {
  const key = (name: string) => (name.startsWith('head-') ? `9${name.slice(5)}` : DAY_BLOCK.test(name) ? `8${name}` : `0${name}`);
  return key(a) < key(b) ? 1 : key(a) > key(b) ? -1 : 0;
}

/**
 * Today's tier (the articles bundleOf puts in today's head, any order): oldest first (date, then
 * slug), cut into blocks of HEAD_MAX; the last block is the head, the others `{today}-bNNN`. A new
 * article (dated now) only ever lands in the head; a full block changes only when an article of it
 * is edited or one dated earlier today comes in (a back-dated feed item shifts the blocks after it).
 */
export function planDayTier<T extends Indexable>(articles: Iterable<T>, today: string): Map<string, T[]> {
  const date = (a: Indexable) => a.publishedAt ?? a.updatedAt;
  const sorted = [...articles].sort((a, b) =>
    date(a) < date(b) ? -1 : date(a) > date(b) ? 1 : a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0,
  );
  const tier = new Map<string, T[]>();
  if (sorted.length === 0) return tier;
  const blocks = Math.ceil(sorted.length / HEAD_MAX);
  // Newest first, as compareBundles orders them.
  tier.set(`head-${today}`, sorted.slice((blocks - 1) * HEAD_MAX));
  for (let b = blocks - 2; b >= 0; b--) tier.set(`${today}-b${String(b).padStart(3, '0')}`, sorted.slice(b * HEAD_MAX, (b + 1) * HEAD_MAX));
  return tier;
}

/**
 * The bundle plan built one article at a time (`add`), so a caller on the server's thread can give the
 * event loop turns in between (at a large archive the plan is a long pass: docs/performance.md, 2026-11-26 entries); `finish`
 * answers it as planSearchBundles does. A closed month of more than MONTH_IN_WEEKS_FROM articles is
 * planned as its weeks, so the plan is a function of the articles and the day alone.
 */
export function searchBundlePlanner(today: string): { add(article: Indexable): void; finish(): Map<string, string[]> } {
  const plan = new Map<string, string[]>();
  /** Closed months: each article's slug and day, cut into weeks at the end when the month is large. */
  const months = new Map<string, { slugs: string[]; days: string[] }>();
  const day: Indexable[] = [];
  const headName = `head-${today}`;
  return {
    add(article) {
      const name = bundleOf(article, today);
      if (name === headName) {
        day.push(article);
        return;
      }
      if (name.length === 7) {
        let month = months.get(name);
        if (!month) months.set(name, (month = { slugs: [], days: [] }));
        month.slugs.push(article.slug);
        month.days.push(dayOf(article.publishedAt ?? article.updatedAt));
        return;
      }
      const slugs = plan.get(name);
      if (slugs) slugs.push(article.slug);
      else plan.set(name, [article.slug]);
    },
    finish() {
      for (const [name, { slugs, days }] of months) {
        if (slugs.length <= MONTH_IN_WEEKS_FROM) {
          plan.set(name, slugs);
          continue;
        }
        for (const [i, slug] of slugs.entries()) {
          const week = weekOf(days[i]!);
          const members = plan.get(week);
          if (members) members.push(slug);
          else plan.set(week, [slug]);
        }
      }
      for (const [name, members] of planDayTier(day, today))
        plan.set(
          name,
          members.map((a) => a.slug),
        );
      return new Map([...plan].sort((a, b) => compareBundles(a[0], b[0])));
    },
  };
}

/** Every bundle the archive needs on `today`, newest first, with the slugs each indexes. */
export function planSearchBundles(articles: Iterable<Indexable>, today: string): Map<string, string[]> {
  const planner = searchBundlePlanner(today);
  for (const article of articles) planner.add(article);
  return planner.finish();
}

export function searchJobPath(bundle: string): string {
  return `/pagefind/${bundle}`;
}

/** The search work a job path names, or undefined for any other path. */
export function searchJobOf(jobPath: string): SearchJob | undefined {
  if (jobPath === COMPACT_JOB) return { kind: 'compact' };
  if (jobPath === REINDEX_ALL_JOB) return { kind: 'all' };
  const name = BUNDLE_JOB.exec(jobPath)?.[1];
  return name && BUNDLE.test(name) ? { kind: 'bundle', bundle: name } : undefined;
}
