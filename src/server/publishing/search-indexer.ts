/** Builds the search bundles with Pagefind, each indexed into a dot folder and swapped in: for a publish, a compaction or a rebuild. */
import fs from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as pagefind from 'pagefind';
import { compressTree, reusingTwins } from './compress.ts';
import { notifyServedFileChange } from './files.ts';
import { BACKGROUND_NICE, lowerProcessPriority } from '../thread-priority.ts';
import { closePagefind, pagefindPids, watchPagefind } from './pagefind-process.ts';
import { BUNDLE } from './search-index.ts';
import { listIndexedPeriods, PAGEFIND_DIR, PERIODS_FILE, readPeriodsFile, recordDayTier, writePeriodsFile } from './search-periods.ts';

/** Slugs per addDirectory glob. */
const GLOB_CHUNK = 2000;
/** Slugs are [A-Za-z0-9._~-] (paths.ts), so none can change a glob's meaning. */
const SAFE_SLUG = /^[A-Za-z0-9_~-][A-Za-z0-9._~-]*$/;

/** Files of a bundle the site never loads (Pagefind's own UIs): dropped so each bundle costs only its index. */
const UNUSED = /^pagefind-(?:ui|component-ui|modular-ui|highlight)\.(?:js|css)$/;
/** Pagefind's script files are the same in every bundle: their twins are made once per process. */
const pagefindTwins = reusingTwins();

export type SearchIndexResult = { pages: number; ms: number };
export type PeriodIndexResult = SearchIndexResult & { period: string; removed: boolean };

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
