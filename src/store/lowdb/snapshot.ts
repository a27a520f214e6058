/**
 * A DATA_DIR taken as one point in time for a backup: every file hard-linked (the append-only logs,
 * and files on another file system, copied) into a staging folder inside it while writes go on, then
 * what they changed meanwhile taken again while the folder's write gate holds them for a moment.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { readJsonFileSync } from './file.ts';
import { LAYOUT_FILE, LAYOUT_VERSION } from './layout.ts';
import { versionFile } from './migrate.ts';
import { writeGateOf } from './write-gate.ts';
import type { Snapshot, SnapshotFile } from '../types.ts';
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

export type { Snapshot, SnapshotFile } from '../types.ts';

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

/** A checkpoint for the long loops below: a turn of the event loop whenever SLICE_MS has passed. */
function timeSlicer(): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < SLICE_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    since = performance.now();
  };
}

/**
 * Links `source` to `target`, or copies it: an append-only log (it grows in place, and a link would
 * grow with it), or a file on another file system.
 */
function takeFile(source: string, target: string, copy: boolean): void {
  if (copy) return fs.copyFileSync(source, target);
  try {
    fs.linkSync(source, target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EXDEV' || code === 'EPERM') fs.copyFileSync(source, target);
    // Gone since the listing: the point in time is after it went (a write the gate saw is taken again).
    else if (code !== 'ENOENT') throw error;
  }
}

/**
 * Links (or copies) every kept file under `from` into `to` (`keep` gets paths relative to `base`).
 * The calls are synchronous (a link is one short system call; through the thread pool each costs a
 * round trip, twice the time in all) with a turn of the event loop every few milliseconds, so
 * readers are still answered meanwhile.
 */
async function linkTree(from: string, to: string, keep: (relative: string) => boolean, base = ''): Promise<void> {
  const folders = [''];
  const slice = timeSlicer();
  while (folders.length > 0) {
    const relative = folders.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(from, relative), { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    for (const entry of entries) {
      await slice();
      const rel = relative ? `${relative}/${entry.name}` : entry.name;
      if (!keep(base ? `${base}/${rel}` : rel)) continue;
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
        takeFile(source, path.join(to, rel), entry.name.endsWith('.jsonl') || entry.isSymbolicLink());
      }
    }
  }
}

/**
 * The first pass while writes go on: the same links through the thread pool, a few at a time, so the
 * writes' own file operations keep their turns between them (a synchronous walk left them one turn of
 * the event loop per slice: 20 writes a second instead of 700).
 */
async function linkTreeAlongside(from: string, to: string, keep: (relative: string) => boolean): Promise<void> {
  // One folder at a time, four links at a time within it: few operations queued in the pool, few promises in memory.
  const folders = [''];
  while (folders.length > 0) {
    const relative = folders.pop()!;
    const entries = await fsp.readdir(path.join(from, relative), { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw error;
    });
    let next = 0;
    const linkNext = async () => {
      while (next < entries.length) {
        const entry = entries[next++]!;
        const rel = relative ? `${relative}/${entry.name}` : entry.name;
        if (!keep(rel)) continue;
        const source = path.join(from, rel);
        const target = path.join(to, rel);
        if (entry.isDirectory()) {
          await fsp.mkdir(target);
          folders.push(rel);
        } else if (entry.isFile() && !entry.name.endsWith('.jsonl')) {
          // Logs and symbolic links are few: taken by the synchronous pass under the hold.
          await fsp.link(source, target).catch((error: NodeJS.ErrnoException) => {
            if (error.code === 'EXDEV' || error.code === 'EPERM') return fsp.copyFile(source, target);
            if (error.code !== 'ENOENT') throw error;
          });
        }
      }
    };
    await Promise.all([linkNext(), linkNext(), linkNext(), linkNext()]);
  }
}

/** Takes `rel` (a file, a folder, or a path that is gone) of `from` into `to` again, replacing what was taken before. */
async function retake(from: string, to: string, rel: string, keep: (relative: string) => boolean): Promise<void> {
  const source = path.join(from, rel);
  const target = path.join(to, rel);
  fs.rmSync(target, { recursive: true, force: true });
  const stat = fs.statSync(source, { throwIfNoEntry: false });
  if (!stat) return;
  fs.mkdirSync(path.dirname(target), { recursive: true });
  if (stat.isDirectory()) {
    fs.mkdirSync(target);
    await linkTree(source, target, keep, rel);
  } else if (stat.isFile()) {
    takeFile(source, target, rel.endsWith('.jsonl'));
  }
}

/**
 * Images the server wrote since the first pass (they are written outside the store, so its gate does
 * not see them; they are only ever added, under their content's hash): taken now, so an article saved
 * meanwhile never names one the backup lacks.
 */
async function retakeNewImages(from: string, to: string, keep: (relative: string) => boolean): Promise<void> {
  const slice = timeSlicer();
  const names = (dir: string) => new Set(fs.existsSync(dir) ? fs.readdirSync(dir) : []);
  const taken = names(path.join(to, 'images'));
  for (const hash of names(path.join(from, 'images'))) {
    await slice();
    const rel = `images/${hash}`;
    if (!keep(rel)) continue;
    if (!taken.has(hash)) {
      await retake(from, to, rel, keep);
      continue;
    }
    const have = names(path.join(to, rel));
    if (!fs.statSync(path.join(from, rel)).isDirectory()) continue;
    for (const name of names(path.join(from, rel))) {
      if (!have.has(name) && keep(`${rel}/${name}`)) takeFile(path.join(from, rel, name), path.join(to, rel, name), false);
    }
  }
}

/**
 * The append-only logs (`audit/`, `briefings/`: copied, since they grow in place) and anything behind
 * a symbolic link, which the first pass leaves to the hold: a few files, read whole at that instant.
 */
async function retakeLogsAndLinks(from: string, to: string, keep: (relative: string) => boolean): Promise<void> {
  for (const folder of ['audit', 'briefings']) {
    const names = fs.existsSync(path.join(from, folder)) ? fs.readdirSync(path.join(from, folder)) : [];
    for (const name of names) if (name.endsWith('.jsonl')) await retake(from, to, `${folder}/${name}`, keep);
  }
  for (const entry of fs.readdirSync(from, { withFileTypes: true }))
    if (entry.isSymbolicLink() && keep(entry.name)) await retake(from, to, entry.name, keep);
}

/** Every file under `root`, relative with `/`, with its size. */
async function listTree(root: string, prefix: string): Promise<SnapshotFile[]> {
  const files: SnapshotFile[] = [];
  const folders = [''];
  const slice = timeSlicer();
  while (folders.length > 0) {
    const relative = folders.pop()!;
    for (const entry of fs.readdirSync(path.join(root, relative), { withFileTypes: true })) {
      await slice();
      const rel = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) folders.push(rel);
      else if (entry.isFile()) files.push({ path: `${prefix}${rel}`, size: fs.statSync(path.join(root, rel)).size });
    }
  }
  return files;
}

/**
 * Takes `dataDir` (or only its `images/`) into a new staging folder inside it, as one point in time
 * (restored, it is like a crash at that instant). When this process has the folder open for writing,
 * every file is linked while writes go on, with the write gate noting what they change; then the
 * gate holds writes (and waits for those in flight) only while the changed paths and new images are
 * taken again. Otherwise the caller holds the folder's lock, and nothing writes meanwhile.
 */
export async function snapshotDataDir(dataDir: string, options: { ownerPid?: number; onlyImages?: boolean } = {}): Promise<Snapshot> {
  const dir = path.resolve(dataDir);
  fs.mkdirSync(dir, { recursive: true });
  await removeStaleStaging(dir);
  const staging = path.join(dir, `${STAGING_PREFIX}${options.ownerPid ?? process.pid}-${randomBytes(6).toString('hex')}`);
  const to = path.join(staging, 'data');
  await fsp.mkdir(to, { recursive: true });
  const keep = options.onlyImages
    ? (rel: string) => (rel === 'images' || rel.startsWith('images/')) && !isLeftOut(rel)
    : (rel: string) => !isLeftOut(rel);
  try {
    const gate = options.onlyImages ? undefined : writeGateOf(dir);
    let heldMs: number | undefined;
    if (!gate) {
      await linkTree(dir, to, keep);
    } else {
      const recording = gate.record();
      try {
        await linkTreeAlongside(dir, to, keep);
        heldMs = await gate.hold(async () => {
          const started = performance.now();
          for (const file of recording.paths) {
            const rel = path.relative(dir, file).split(path.sep).join('/');
            if (keep(rel)) await retake(dir, to, rel, keep);
          }
          await retakeNewImages(dir, to, keep);
          await retakeLogsAndLinks(dir, to, keep);
          return performance.now() - started;
        });
      } finally {
        recording.stop();
      }
    }
    return { dir: staging, files: await listTree(to, 'data/'), heldMs };
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
