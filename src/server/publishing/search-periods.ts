/**
 * The search bundles on disk and periods.json, the list of them readers load: reading and writing that list, the
 * day tier's record in the render state, and which bundles must be indexed again.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { notifyServedFileChange } from './files.ts';
import { readRenderStateHeader, renderStateFileFor, updateRenderStateHeaderAsync } from './render-state.ts';
import { BUNDLE, compareBundles, DAY_BLOCK } from './search-index.ts';

export const PAGEFIND_DIR = 'pagefind';
/** The list of bundles, newest first: `{ "periods": ["head-2026-11-23", "2026-11-22", "2026-10", ...] }`. */
export const PERIODS_FILE = 'periods.json';

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
export async function writePeriodsFile(root: string, names: Iterable<string>): Promise<string[]> {
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

/** The slugs each day-tier bundle was indexed with, from the render state beside the served folder. */
async function readDayTier(root: string): Promise<Record<string, string[]>> {
  return readRenderStateHeader(renderStateFileFor(root)).dayTier ?? {};
}

/** Notes the slugs the day-tier bundles among `indexed` were built from, and forgets bundles no longer listed. */
export async function recordDayTier(
  root: string,
  indexed: ReadonlyMap<string, readonly string[]>,
  listed: Iterable<string>,
): Promise<void> {
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
