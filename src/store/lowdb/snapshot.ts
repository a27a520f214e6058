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

/** How long the linking holds the thread before the event loop gets a turn (readers wait at most about this). */
const SLICE_MS = 4;

/**
 * Links (or copies) every kept file under `from` into `to`; answers the relative paths taken. The
 * calls are synchronous (a link is one short system call; through the thread pool each costs a
 * round trip, which doubled the time writes are held) with a turn of the event loop every few
 * milliseconds, so readers are still answered while writes wait.
 */
async function linkTree(from: string, to: string, keep: (relative: string) => boolean): Promise<string[]> {
  const taken: string[] = [];
  const folders = [''];
  let since = performance.now();
  while (folders.length > 0) {
    const relative = folders.pop()!;
    for (const entry of fs.readdirSync(path.join(from, relative), { withFileTypes: true })) {
      if (performance.now() - since >= SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        since = performance.now();
      }
      const rel = relative ? `${relative}/${entry.name}` : entry.name;
      if (!keep(rel)) continue;
      const source = path.join(from, rel);
      let kind: fs.Stats | fs.Dirent = entry;
      if (entry.isSymbolicLink()) {
        const followed = fs.statSync(source, { throwIfNoEntry: false });
        if (!followed) continue;
        kind = followed;
      }
      if (kind.isDirectory()) {
        fs.mkdirSync(path.join(to, rel));
        folders.push(rel);
      } else if (kind.isFile()) {
        const target = path.join(to, rel);
        // Append-only logs grow in place: a link would grow with them, so they are copied.
        if (entry.name.endsWith('.jsonl') || entry.isSymbolicLink()) fs.copyFileSync(source, target);
        else {
          try {
            fs.linkSync(source, target);
          } catch (error) {
            const code = (error as NodeJS.ErrnoException).code;
            // Another file system (a mounted images folder): copied.
            if (code === 'EXDEV' || code === 'EPERM') fs.copyFileSync(source, target);
            // Gone since the listing (nothing the gate holds): the point in time is after it went.
            else if (code === 'ENOENT') continue;
            else throw error;
          }
        }
        taken.push(rel);
      }
    }
  }
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
    let since = performance.now();
    for (const rel of taken) {
      files.push({ path: `data/${rel}`, size: fs.statSync(path.join(staging, 'data', rel)).size });
      if (performance.now() - since >= SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        since = performance.now();
      }
    }
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
