/**
 * The Pagefind search index in tiers, like an LSM tree: a small head bundle of today's articles that a
 * publish re-indexes, the current month up to yesterday, and one bundle per closed month that a publish
 * never touches; /pagefind/periods.json names the complete set, and a daily compaction folds the head
 * into its month by building the new bundles under new names and then swapping periods.json at once.
 * Today's articles are cut, oldest first, into blocks of HEAD_MAX: the head is the newest block, so a
 * publish re-indexes at most HEAD_MAX pages (and, when the head fills, one full block) at any size.
 */
import fs from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as pagefind from 'pagefind';
import { compressTree, reusingTwins } from './compress.ts';
import { notifyServedFileChange } from './files.ts';
import { BACKGROUND_NICE, lowerProcessPriority } from '../thread-priority.ts';
import { closePagefind, pagefindPids, watchPagefind } from './pagefind-process.ts';
import { readRenderStateHeader, renderStateFileFor, updateRenderStateHeaderAsync } from './render-state.ts';

export const PAGEFIND_DIR = 'pagefind';
/** The list of bundles, newest first: `{ "periods": ["head-2026-11-23", "2026-11-22", "2026-10", ...] }`. */
export const PERIODS_FILE = 'periods.json';
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
const DAY_BLOCK = /^(\d{4}-\d{2}-\d{2})-b\d{3}$/;
/** Slugs per addDirectory glob. */
const GLOB_CHUNK = 2000;
/** Slugs are [A-Za-z0-9._~-] (paths.ts), so none can change a glob's meaning. */
const SAFE_SLUG = /^[A-Za-z0-9_~-][A-Za-z0-9._~-]*$/;
/** Job paths: re-index one bundle, compact (build the bundles the date asks for), or re-index them all. */
const BUNDLE_JOB = /^\/pagefind\/([a-z0-9-]+)$/;
export const COMPACT_JOB = '/pagefind/compact';
export const REINDEX_ALL_JOB = '/pagefind/all';

/** Files of a bundle the site never loads (Pagefind's own UIs): dropped so each bundle costs only its index. */
const UNUSED = /^pagefind-(?:ui|component-ui|modular-ui|highlight)\.(?:js|css)$/;
/** Pagefind's script files are the same in every bundle: their twins are made once per process. */
const pagefindTwins = reusingTwins();

export type SearchIndexResult = { pages: number; ms: number };
export type PeriodIndexResult = SearchIndexResult & { period: string; removed: boolean };
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

/** Bundles that are complete on disk, newest first (named in periods.json or not). */
export async function listIndexedPeriods(clientDir: string): Promise<string[]> {
  const dir = path.join(path.resolve(clientDir), PAGEFIND_DIR);
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return [];
  }
  const complete: string[] = [];
  for (const name of names) {
    if (!BUNDLE.test(name)) continue;
    try {
      await fs.access(path.join(dir, name, 'pagefind-entry.json'));
      complete.push(name);
    } catch {
      // Not a complete bundle.
    }
  }
  return complete.sort(compareBundles);
}

/** The bundles periods.json names now (empty when there is none). */
export async function readPeriodsFile(clientDir: string): Promise<string[]> {
  try {
    const { periods } = JSON.parse(await fs.readFile(path.join(path.resolve(clientDir), PAGEFIND_DIR, PERIODS_FILE), 'utf8')) as {
      periods?: unknown;
    };
    return Array.isArray(periods) ? periods.filter((p): p is string => typeof p === 'string' && BUNDLE.test(p)) : [];
  } catch {
    return [];
  }
}

/** Writes periods.json naming those of `names` that are complete on disk, newest first (temp file + rename), unless it already says so. */
async function writePeriodsFile(root: string, names: Iterable<string>): Promise<string[]> {
  const dir = path.join(root, PAGEFIND_DIR);
  await fs.mkdir(dir, { recursive: true });
  const complete = new Set(await listIndexedPeriods(root));
  const periods = [...new Set(names)].filter((name) => complete.has(name)).sort(compareBundles);
  const body = JSON.stringify({ periods }) + '\n';
  // Unchanged: left as it is (no new mtime for caches and purges to chase).
  if ((await fs.readFile(path.join(dir, PERIODS_FILE), 'utf8').catch(() => '')) === body) return periods;
  const temp = path.join(dir, `.${PERIODS_FILE}.${process.pid}.${Date.now()}.tmp`);
  await writeThenRename(temp, body, path.join(dir, PERIODS_FILE));
  notifyServedFileChange(path.join(dir, PERIODS_FILE));
  return periods;
}

/** Replaces `target` by `next` (both folders): the old one is renamed away first, then removed. */
async function swapFolder(next: string, target: string, stamp: string): Promise<void> {
  const old = path.join(path.dirname(target), `.old-${path.basename(target)}-${stamp}`);
  let hadOld = true;
  try {
    await fs.rename(target, old);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    hadOld = false;
  }
  await fs.rename(next, target);
  if (hadOld) await fs.rm(old, { recursive: true, force: true });
}

const lowered = new Set<number>();

/**
 * Lowers the priority of Pagefind's indexing process (Linux), once per process: the Pagefind package
 * starts it with the server's priority, where its threads shared the cores with the event loop at an
 * equal weight. The threads it starts later inherit the value.
 */
function yieldToRequests(): void {
  for (const pid of pagefindPids()) {
    if (lowered.has(pid)) continue;
    if (lowerProcessPriority(pid, BACKGROUND_NICE)) lowered.add(pid);
  }
}

/**
 * Indexes the article pages of one bundle (their slugs given, their HTML read from the client folder) into
 * /pagefind/{name}/, or removes that bundle when it has none. Does not touch periods.json.
 * Runs through an open Pagefind service; the caller closes it (closeSearchIndexer).
 */
async function indexBundle(root: string, period: string, slugs: readonly string[]): Promise<PeriodIndexResult> {
  const started = performance.now();
  if (!BUNDLE.test(period)) throw new Error(`Not a bundle: ${period}`);
  const unsafe = slugs.find((slug) => !SAFE_SLUG.test(slug));
  if (unsafe !== undefined) throw new Error(`Not a slug: ${unsafe}`);
  const target = path.join(root, PAGEFIND_DIR, period);
  const stamp = `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  // Dot folders are never served, so the new bundle is invisible until the rename.
  const next = path.join(root, PAGEFIND_DIR, `.next-${period}-${stamp}`);
  let pages = 0;
  const watch = watchPagefind();
  let index: pagefind.PagefindIndex | undefined;
  try {
    const created = await pagefind.createIndex({});
    if (!created.index) throw new Error(created.errors.join('; ') || 'no index');
    index = created.index;
    yieldToRequests();
    // Pagefind reads the bundle's files itself (one walk, files parsed in parallel): a glob naming
    // the slugs, in chunks so a large month does not make one huge pattern. A page not rendered
    // yet is simply not matched; the job that renders it queues this bundle again.
    for (let start = 0; start < slugs.length; start += GLOB_CHUNK) {
      const chunk = slugs.slice(start, start + GLOB_CHUNK);
      const glob = chunk.length === 1 ? `article/${chunk[0]}/index.html` : `article/{${chunk.join(',')}}/index.html`;
      const added = await index.addDirectory({ path: root, glob });
      if (added.errors.length) throw new Error(added.errors.join('; '));
      pages += added.page_count;
    }
    if (pages === 0) {
      await fs.rm(target, { recursive: true, force: true });
      notifyServedFileChange(target);
      return { period, pages, removed: true, ms: performance.now() - started };
    }
    await fs.mkdir(path.dirname(next), { recursive: true });
    const written = await index.writeFiles({ outputPath: next });
    if (written.errors.length) throw new Error(written.errors.join('; '));
    for (const name of await fs.readdir(next)) if (UNUSED.test(name)) await fs.rm(path.join(next, name), { force: true });
    // Pagefind's script, wasm loader and entry file get brotli and gzip twins (its index fragments are gzip already).
    await compressTree(next, { compress: pagefindTwins });
    await swapFolder(next, target, stamp);
    notifyServedFileChange(target);
    return { period, pages, removed: false, ms: performance.now() - started };
  } catch (error) {
    // The bundle served so far stays as it is: the new one was only ever in the dot folder.
    await fs.rm(next, { recursive: true, force: true });
    const died = watch.died() ? ' (the Pagefind process died; the next build starts a new one)' : '';
    // A service that lost its process some other way (a write to it failed): the next build starts afresh.
    if (!died && /backend (?:is )?closed/i.test(String((error as Error).message))) await closePagefind();
    throw new Error(`Indexing ${period} for search failed${died}`, { cause: error });
  } finally {
    watch.stop();
    // A dead process has no index to delete (and a call to it would start a new process for nothing).
    if (index && !watch.died()) await index.deleteIndex().catch(() => {});
  }
}

/**
 * Re-indexes some bundles in place and adds them to (or, emptied, drops them from) the set
 * periods.json names; the other bundles and names stay as they are. The publish path: `bundles` is
 * the head, or the month of an old article that was edited.
 */
export async function buildSearchPeriods(
  clientDir: string,
  bundles: ReadonlyMap<string, readonly string[]>,
  /** Bundles to stop listing (a block of today's tier that no longer exists): removed by the next compaction. */
  unlist: Iterable<string> = [],
): Promise<PeriodIndexResult[]> {
  const root = path.resolve(clientDir);
  const listed = new Set(await readPeriodsFile(root));
  for (const name of unlist) listed.delete(name);
  const results: PeriodIndexResult[] = [];
  try {
    for (const [name, slugs] of bundles) {
      const result = await indexBundle(root, name, slugs);
      results.push(result);
      if (result.removed) listed.delete(name);
      else listed.add(name);
    }
  } finally {
    await writePeriodsFile(root, listed);
    await recordDayTier(root, bundles, listed);
  }
  return results;
}

/** The slugs each day-tier bundle was indexed with, from the render state beside the served folder. */
async function readDayTier(root: string): Promise<Record<string, string[]>> {
  return readRenderStateHeader(renderStateFileFor(root)).dayTier ?? {};
}

/** Notes the slugs the day-tier bundles among `indexed` were built from, and forgets bundles no longer listed. */
async function recordDayTier(root: string, indexed: ReadonlyMap<string, readonly string[]>, listed: Iterable<string>): Promise<void> {
  const keep = new Set(listed);
  const before = await readDayTier(root);
  const after: Record<string, string[]> = {};
  for (const [name, slugs] of Object.entries(before)) if (keep.has(name)) after[name] = slugs;
  for (const [name, slugs] of indexed) if (keep.has(name) && (name.startsWith('head-') || DAY_BLOCK.test(name))) after[name] = [...slugs];
  // Sorted, so a full build and an incremental one write the same bytes.
  const sorted = Object.fromEntries(Object.entries(after).sort((a, b) => compareBundles(a[0], b[0])));
  if (JSON.stringify(sorted) === JSON.stringify(before)) return;
  await updateRenderStateHeaderAsync(renderStateFileFor(root), ({ dayTier: _old, ...header }) =>
    Object.keys(sorted).length === 0 ? header : { ...header, dayTier: sorted },
  );
}

/** Writes `temp` and renames it over `file`; on a failure (a full disk) the temp file goes and `file` stays as it was. */
async function writeThenRename(temp: string, body: string, file: string): Promise<void> {
  try {
    await fs.writeFile(temp, body);
    await fs.rename(temp, file);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
}

/**
 * The bundles of today's tier (planDayTier's, as slugs) that must be indexed again: the head always
 * (a publish changes it), a block that is not listed, was built from other slugs, or has a page
 * rendered after its index was written (an article of it was edited). Costs a stat per article of the day.
 */
export async function staleDayBundles(clientDir: string, tier: ReadonlyMap<string, readonly string[]>): Promise<string[]> {
  const root = path.resolve(clientDir);
  const listed = new Set(await readPeriodsFile(root));
  const recorded = await readDayTier(root);
  const stale: string[] = [];
  for (const [name, slugs] of tier) {
    if (name.startsWith('head-') || !listed.has(name) || JSON.stringify(recorded[name] ?? null) !== JSON.stringify(slugs)) {
      stale.push(name);
      continue;
    }
    if (await drawnSinceIndexed(root, name, slugs)) stale.push(name);
  }
  return stale;
}

/** Whether an article page of `slugs` was written (or is missing) since bundle `name`'s index was: a stat per page until one is. */
async function drawnSinceIndexed(root: string, name: string, slugs: readonly string[]): Promise<boolean> {
  const indexedAt = await fs.stat(path.join(root, PAGEFIND_DIR, name, 'pagefind-entry.json')).then(
    (s) => s.mtimeMs,
    () => 0,
  );
  for (const slug of slugs) {
    const renderedAt = await fs.stat(path.join(root, 'article', slug, 'index.html')).then(
      (s) => s.mtimeMs,
      () => Infinity,
    );
    if (renderedAt >= indexedAt) return true;
  }
  return false;
}

/** How many pages a bundle on disk was indexed with (its entry file), or undefined when it has none. */
async function indexedPageCount(root: string, name: string): Promise<number | undefined> {
  try {
    const entry = JSON.parse(await fs.readFile(path.join(root, PAGEFIND_DIR, name, 'pagefind-entry.json'), 'utf8')) as {
      languages?: Record<string, { page_count?: number }>;
    };
    return Object.values(entry.languages ?? {}).reduce((sum, language) => sum + (language.page_count ?? 0), 0);
  } catch {
    return undefined;
  }
}

/**
 * The weeks of a closed month (`weeks`: each with the slugs it holds now) that must be indexed again:
 * one not listed, one whose index holds another number of pages (an article left it or joined it), and
 * one holding an article in `changed` or, without it, an article page rendered after its index was
 * written. An article that joins a week has its page drawn again (its date moved), so with the count
 * this finds every week whose members or text changed. Costs a stat per article of the month at most.
 */
export async function staleWeeks(
  clientDir: string,
  weeks: ReadonlyMap<string, readonly string[]>,
  changed?: ReadonlySet<string>,
): Promise<string[]> {
  const root = path.resolve(clientDir);
  const listed = new Set(await readPeriodsFile(root));
  const stale: string[] = [];
  for (const [name, slugs] of weeks) {
    if (!listed.has(name) || (await indexedPageCount(root, name)) !== slugs.length) {
      stale.push(name);
      continue;
    }
    if (changed ? slugs.some((slug) => changed.has(slug)) : await drawnSinceIndexed(root, name, slugs)) stale.push(name);
  }
  return stale;
}

/**
 * Brings the bundles in line with `plan` (planSearchBundles for today): builds the bundles it names
 * that are missing (and those `rebuild` names, or all of them) while readers still use the old set, then swaps
 * periods.json to the plan in one rename, then removes the bundles no longer named (those it just
 * retired one sync later with `retire: 'later'`). So an article is in exactly one listed bundle before
 * and after, never in two or none. The compaction and rebuild path.
 */
export async function syncSearchBundles(
  clientDir: string,
  plan: ReadonlyMap<string, readonly string[]>,
  rebuild: 'missing' | 'all' | ReadonlySet<string>,
  /** 'later' (the server): bundles the swap retires stay on disk until the next sync, for readers that loaded the old list. */
  retire: 'now' | 'later' = 'now',
): Promise<{ results: PeriodIndexResult[]; periods: string[]; removed: string[]; ms: number }> {
  const started = performance.now();
  const root = path.resolve(clientDir);
  const dir = path.join(root, PAGEFIND_DIR);
  await fs.mkdir(dir, { recursive: true });
  const onDisk = new Set(await listIndexedPeriods(root));
  const previous = new Set(retire === 'later' ? await readPeriodsFile(root) : []);
  const results: PeriodIndexResult[] = [];
  for (const [name, slugs] of plan)
    if (rebuild === 'all' || !onDisk.has(name) || (typeof rebuild !== 'string' && rebuild.has(name)))
      results.push(await indexBundle(root, name, slugs));
  const periods = await writePeriodsFile(root, plan.keys());
  await recordDayTier(root, new Map(results.filter((r) => !r.removed).map((r) => [r.period, plan.get(r.period)!])), periods);
  const removed: string[] = [];
  for (const name of await fs.readdir(dir)) {
    if (name === PERIODS_FILE || plan.has(name)) continue;
    // Named until this swap: a page that read the old periods.json may still fetch its files.
    if (previous.has(name) && !periods.includes(name)) continue;
    // Bundles of the previous day's tiers, of months without articles, of another layout, leftovers of a crash.
    await fs.rm(path.join(dir, name), { recursive: true, force: true });
    notifyServedFileChange(path.join(dir, name));
    if (BUNDLE.test(name)) removed.push(name);
  }
  return { results, periods, removed, ms: performance.now() - started };
}

/** Indexes every bundle of the site afresh and removes everything else: the whole-site rebuild path. */
export async function buildSearchIndex(
  clientDir: string,
  plan: ReadonlyMap<string, readonly string[]>,
): Promise<SearchIndexResult & { bundles: PeriodIndexResult[] }> {
  const { results, ms } = await syncSearchBundles(clientDir, plan, 'all');
  return { pages: results.reduce((sum, r) => sum + r.pages, 0), ms, bundles: results };
}

/** Removes half-written index and bundle folders a killed process left behind. */
export async function removeSearchLeftovers(clientDir: string): Promise<void> {
  for (const entry of await fs.readdir(clientDir)) {
    if (entry.startsWith('.pagefind-')) await fs.rm(path.join(clientDir, entry), { recursive: true, force: true });
  }
  const dir = path.join(path.resolve(clientDir), PAGEFIND_DIR);
  let names: string[] = [];
  try {
    names = await fs.readdir(dir);
  } catch {
    return;
  }
  for (const name of names)
    if (name.startsWith('.next-') || name.startsWith('.old-')) await fs.rm(path.join(dir, name), { recursive: true, force: true });
}

/** The version of Pagefind installed: a search index is never mixed from bundles of two versions. */
export function searchIndexerVersion(): string {
  const entry = fileURLToPath(import.meta.resolve('pagefind'));
  const manifest = JSON.parse(readFileSync(path.join(path.dirname(entry), '..', 'package.json'), 'utf8')) as { version: string };
  return manifest.version;
}

/** Stops Pagefind's indexing process (started on first use). */
export async function closeSearchIndexer(): Promise<void> {
  await closePagefind();
}
