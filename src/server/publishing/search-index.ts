/**
 * The Pagefind search index, one bundle per month of publishedAt under /pagefind/{YYYY-MM}/ plus
 * /pagefind/periods.json naming them; the browser loads the newest and merges the others
 * (mergeIndex), so a publish re-indexes its own month only. Each bundle is built into a dot folder
 * and renamed into place, so readers never load a half-written one.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import * as pagefind from 'pagefind';
import { compressTree } from './compress.ts';
import { notifyServedFileChange } from './files.ts';

export const PAGEFIND_DIR = 'pagefind';
/** The list of bundles, newest first: `{ "periods": ["2026-11", ...] }`. */
export const PERIODS_FILE = 'periods.json';
const PERIOD = /^\d{4}-\d{2}$/;
/** Slugs per addDirectory glob. */
const GLOB_CHUNK = 2000;
/** Slugs are [A-Za-z0-9._~-] (paths.ts), so none can change a glob's meaning. */
const SAFE_SLUG = /^[A-Za-z0-9_~-][A-Za-z0-9._~-]*$/;
/** A job path asking the worker to re-index one month. */
const SEARCH_JOB = /^\/pagefind\/(\d{4}-\d{2})$/;

/** Files of a bundle the site never loads (Pagefind's own UIs): dropped so each month costs only its index. */
const UNUSED = /^pagefind-(?:ui|component-ui|modular-ui|highlight)\.(?:js|css)$/;

export type SearchIndexResult = { pages: number; ms: number };
export type PeriodIndexResult = SearchIndexResult & { period: string; removed: boolean };

export function searchJobPath(period: string): string {
  return `/pagefind/${period}`;
}

/** The month a search job names, or undefined for any other path. */
export function periodOfSearchJob(jobPath: string): string | undefined {
  return SEARCH_JOB.exec(jobPath)?.[1];
}

/** Months that have a complete bundle on disk, newest first. */
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
    if (!PERIOD.test(name)) continue;
    try {
      await fs.access(path.join(dir, name, 'pagefind-entry.json'));
      complete.push(name);
    } catch {
      // Not a complete bundle.
    }
  }
  return complete.sort().reverse();
}

/** Whether the site has a period index at all (the server builds it at start when not). */
export async function hasSearchIndex(clientDir: string): Promise<boolean> {
  try {
    await fs.access(path.join(path.resolve(clientDir), PAGEFIND_DIR, PERIODS_FILE));
    return true;
  } catch {
    return false;
  }
}

/** Rewrites periods.json from the bundles on disk (temp file + rename). */
export async function writePeriodsFile(clientDir: string): Promise<string[]> {
  const dir = path.join(path.resolve(clientDir), PAGEFIND_DIR);
  await fs.mkdir(dir, { recursive: true });
  const periods = await listIndexedPeriods(clientDir);
  const temp = path.join(dir, `.${PERIODS_FILE}.${process.pid}.${Date.now()}.tmp`);
  await fs.writeFile(temp, JSON.stringify({ periods }) + '\n');
  await fs.rename(temp, path.join(dir, PERIODS_FILE));
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

/**
 * Indexes the article pages of one month (their slugs given, their HTML read from the client folder) into
 * /pagefind/{period}/, or removes that bundle when the month has none. Does not touch periods.json.
 * Runs through an open Pagefind service; the caller closes it (closeSearchIndexer).
 */
async function indexPeriod(root: string, period: string, slugs: readonly string[]): Promise<PeriodIndexResult> {
  const started = performance.now();
  if (!PERIOD.test(period)) throw new Error(`Not a period: ${period}`);
  const unsafe = slugs.find((slug) => !SAFE_SLUG.test(slug));
  if (unsafe !== undefined) throw new Error(`Not a slug: ${unsafe}`);
  const target = path.join(root, PAGEFIND_DIR, period);
  const stamp = `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  // Dot folders are never served, so the new bundle is invisible until the rename.
  const next = path.join(root, PAGEFIND_DIR, `.next-${period}-${stamp}`);
  let pages = 0;
  const { index, errors } = await pagefind.createIndex({});
  if (!index) throw new Error(errors.join('; ') || 'no index');
  try {
    // Pagefind reads the month's files itself (one walk, files parsed in parallel): a glob naming
    // the slugs, in chunks so a large month does not make one huge pattern. A page not rendered
    // yet is simply not matched; the job that renders it queues this month again.
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
    await compressTree(next);
    await swapFolder(next, target, stamp);
    notifyServedFileChange(target);
    return { period, pages, removed: false, ms: performance.now() - started };
  } catch (error) {
    await fs.rm(next, { recursive: true, force: true });
    throw new Error(`Indexing ${period} for search failed`, { cause: error });
  } finally {
    await index.deleteIndex();
  }
}

/** Re-indexes some months and then rewrites periods.json; each month is swapped in on its own. */
export async function buildSearchPeriods(clientDir: string, periods: ReadonlyMap<string, readonly string[]>): Promise<PeriodIndexResult[]> {
  const root = path.resolve(clientDir);
  const results: PeriodIndexResult[] = [];
  try {
    for (const [period, slugs] of periods) results.push(await indexPeriod(root, period, slugs));
  } finally {
    await writePeriodsFile(root);
  }
  return results;
}

/**
 * Indexes every month of the site (slugs grouped by month) and removes what the index of another
 * layout or of months without articles left behind: the whole-site rebuild path.
 */
export async function buildSearchIndex(clientDir: string, periods: ReadonlyMap<string, readonly string[]>): Promise<SearchIndexResult> {
  const started = performance.now();
  const root = path.resolve(clientDir);
  const dir = path.join(root, PAGEFIND_DIR);
  await fs.mkdir(dir, { recursive: true });
  const results = await buildSearchPeriods(root, periods);
  for (const name of await fs.readdir(dir)) {
    if (name === PERIODS_FILE || (PERIOD.test(name) && periods.has(name))) continue;
    // Bundles of months that lost their articles, the old single-bundle layout, leftovers of a crash.
    await fs.rm(path.join(dir, name), { recursive: true, force: true });
    notifyServedFileChange(path.join(dir, name));
  }
  await writePeriodsFile(root);
  return { pages: results.reduce((sum, r) => sum + r.pages, 0), ms: performance.now() - started };
}

/** Removes half-written bundle folders a killed process left behind. */
export async function removeSearchLeftovers(clientDir: string): Promise<void> {
  const dir = path.join(path.resolve(clientDir), PAGEFIND_DIR);
  let names: string[] = [];
  try {
    names = await fs.readdir(dir);
  } catch {
    return;
  }
  for (const name of names) if (name.startsWith('.next-') || name.startsWith('.old-')) await fs.rm(path.join(dir, name), { recursive: true, force: true });
}

/** Stops Pagefind's indexing process (started on first use). */
export async function closeSearchIndexer(): Promise<void> {
  await pagefind.close();
}
