/**
 * A DATA_DIR taken as one point in time for a backup: every file hard-linked (the append-only logs,
 * and files on another file system, copied) into a staging folder inside it, while the folder's
 * write gate holds new writes and none is in flight.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { readJsonFileSync } from './file.ts';
import { LAYOUT_FILE, LAYOUT_VERSION } from './layout.ts';
import { versionFile } from './migrate.ts';
import { writeGateOf } from './write-gate.ts';
import { writeFileAtomic } from './file.ts';

/** Staging folders live inside DATA_DIR (hard links need the same file system) under this prefix. */
export const STAGING_PREFIX = '.backup-';
/** A restore extracts into a folder of this prefix before renaming it into place. */
export const RESTORE_PREFIX = '.restore-';

/**
 * Top-level names a backup leaves out: the lock and the running server's address (a process's, not
 * the data's), uploads not yet normalised (`tmp/`, one-time and short-lived), the development mail
 * outbox (mails already handed over), and a server's identity among several on one database.
 */
const LEFT_OUT = new Set(['.lock', '.server.json', 'tmp', 'outbox', 'server-id']);

/** Whether a DATA_DIR entry stays out of a backup (and is not a sign of data in a restore target). */
export function isLeftOut(relative: string): boolean {
  const name = path.basename(relative);
  if (name.endsWith('.tmp')) return true;
  const top = relative.split(/[\\/]/)[0]!;
  return LEFT_OUT.has(top) || top.startsWith(STAGING_PREFIX) || top.startsWith(RESTORE_PREFIX);
}

export type SnapshotFile = { path: string; size: number };
export type Snapshot = {
  /** The staging folder (DATA_DIR's files under its `data/`); the caller removes it once its archive is written. */
  dir: string;
  /** Files under it (`data/...`), relative with `/`, in a stable order. */
  files: SnapshotFile[];
  /** How long writes were held (ms). */
  heldMs: number;
};

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes staging folders whose process died before it could (a backup killed halfway). */
export async function removeStaleStaging(dataDir: string): Promise<void> {
  let names: string[];
  try {
    names = await fsp.readdir(dataDir);
  } catch {
    return;
  }
  for (const name of names) {
    const match = /^\.(?:backup|restore)-(\d+)-/.exec(name);
    if (match && !isAlive(Number(match[1]))) await fsp.rm(path.join(dataDir, name), { recursive: true, force: true });
  }
}

/** Runs tasks with at most `limit` at once. */
function createLimiter(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (active >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await task();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}

/** Links (or copies) every kept file under `from` into `to`; answers the relative paths taken. */
async function linkTree(from: string, to: string, keep: (relative: string) => boolean): Promise<string[]> {
  const taken: string[] = [];
  const limit = createLimiter(32);
  const visit = async (relative: string): Promise<void> => {
    const entries = await limit(() => fsp.readdir(path.join(from, relative), { withFileTypes: true }));
    const work: Promise<void>[] = [];
    for (const entry of entries) {
      const rel = relative ? `${relative}/${entry.name}` : entry.name;
      if (!keep(rel)) continue;
      const source = path.join(from, rel);
      let isDirectory = entry.isDirectory();
      let isFile = entry.isFile();
      if (entry.isSymbolicLink()) {
        const stat = await fsp.stat(source).catch(() => undefined);
        isDirectory = stat?.isDirectory() ?? false;
        isFile = stat?.isFile() ?? false;
      }
      if (isDirectory) {
        work.push(limit(() => fsp.mkdir(path.join(to, rel))).then(() => visit(rel)));
      } else if (isFile) {
        taken.push(rel);
        const target = path.join(to, rel);
        // Append-only logs grow in place: a link would grow with them, so they are copied.
        const copy = entry.name.endsWith('.jsonl') || entry.isSymbolicLink();
        work.push(
          limit(() =>
            (copy ? fsp.copyFile(source, target) : fsp.link(source, target)).catch((error: NodeJS.ErrnoException) => {
              if (error.code === 'EXDEV' || error.code === 'EPERM') return fsp.copyFile(source, target);
              // Removed between the listing and the link: the point in time is after the removal.
              if (error.code === 'ENOENT') return void taken.splice(taken.indexOf(rel), 1);
              throw error;
            }),
          ),
        );
      }
    }
    await Promise.all(work);
  };
  await visit('');
  return taken;
}

/**
 * Takes `dataDir` (or only its `images/`) into a new staging folder inside it. When this process has
 * the folder open for writing, its write gate is held for the linking: writes wait for it, and the
 * staging folder is a point in time (restored, it is like a crash at that instant). Otherwise the
 * caller holds the folder's lock, and nothing writes meanwhile.
 */
export async function snapshotDataDir(dataDir: string, options: { ownerPid?: number; onlyImages?: boolean } = {}): Promise<Snapshot> {
  const dir = path.resolve(dataDir);
  fs.mkdirSync(dir, { recursive: true });
  await removeStaleStaging(dir);
  const staging = path.join(dir, `${STAGING_PREFIX}${options.ownerPid ?? process.pid}-${randomBytes(6).toString('hex')}`);
  await fsp.mkdir(path.join(staging, 'data'), { recursive: true });
  const keep = options.onlyImages
    ? (rel: string) => (rel === 'images' || rel.startsWith('images/')) && !isLeftOut(rel)
    : (rel: string) => !isLeftOut(rel);
  try {
    const link = async () => {
      const started = performance.now();
      const taken = await linkTree(dir, path.join(staging, 'data'), keep);
      return { taken, heldMs: performance.now() - started };
    };
    const gate = writeGateOf(dir);
    const { taken, heldMs } = gate && !options.onlyImages ? await gate.hold(link) : await link();
    taken.sort();
    // Sizes from the staged files, which nothing changes any more.
    const files: SnapshotFile[] = [];
    const limit = createLimiter(32);
    await Promise.all(
      taken.map((rel) =>
        limit(async () => void files.push({ path: `data/${rel}`, size: (await fsp.stat(path.join(staging, 'data', rel))).size })),
      ),
    );
    files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return { dir: staging, files, heldMs };
  } catch (error) {
    await fsp.rm(staging, { recursive: true, force: true });
    throw error;
  }
}

export type LowdbDescription = { layout: number; storeId: string | undefined; articlesVersion: number };

/** What a (staged or restored) lowdb folder holds: its layout, its store's id and its articles' version. */
export function describeLowdbFolder(dir: string): LowdbDescription {
  const layout = readJsonFileSync<{ layout?: number }>(path.join(dir, LAYOUT_FILE))?.layout;
  const storeId = readJsonFileSync<{ storeId?: unknown }>(path.join(dir, 'meta.json'))?.storeId;
  const version = readJsonFileSync<{ version?: unknown }>(versionFile(dir))?.version;
  // No store.json: a layout-1 folder (its files are migrated at the next start), or an empty one.
  return {
    layout: typeof layout === 'number' ? layout : fs.existsSync(path.join(dir, 'articles.json')) ? 1 : LAYOUT_VERSION,
    storeId: typeof storeId === 'string' ? storeId : undefined,
    articlesVersion: typeof version === 'number' ? version : 0,
  };
}

/** The newest layout this code opens. */
export const LOWDB_LAYOUT = LAYOUT_VERSION;

/**
 * Gives a restored folder a store id of its own: pages rendered from the store it was taken from
 * (a render manifest naming that id) must not pass for pages of this one, which goes its own way.
 */
export async function renewLowdbStoreId(dir: string, storeId: string): Promise<void> {
  const file = path.join(dir, 'meta.json');
  const meta = readJsonFileSync<Record<string, unknown>>(file) ?? {};
  await writeFileAtomic(file, JSON.stringify({ ...meta, storeId }));
}
