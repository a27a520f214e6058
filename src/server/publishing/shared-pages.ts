/**
 * Several servers on one database: each copies the pages another server rendered (stored once in
 * the database, announced by NOTIFY) into its own served folder, and catches up from the stored
 * pages when it starts or its listening connection comes back.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Store } from '../../store/index.ts';
import type { Logger } from '../log.ts';
import { deleteServedFile, writeFileAtomic, type FileOutcome } from './files.ts';
import { fileForPath, isRegenerablePath } from './paths.ts';
import { searchJobOf } from './search-index.ts';

async function localSha256(file: string): Promise<string | undefined> {
  try {
    return createHash('sha256')
      .update(await fs.readFile(file))
      .digest('hex');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The served folders a server copies into: its pages (SERVE_DIR) and its processed images (DATA_DIR/images). */
export type SharedFolders = { clientDir: string; imagesDir: string };

/** A processed image (content-addressed, so never changed once written). */
const IMAGE_PATH = /^\/images\/[a-f0-9]{16,64}\/\d+\.webp$/;

/** The file a stored path is copied to, with the folder it lives in; undefined for anything else (pending uploads, search notes). */
function targetOf(folders: SharedFolders, publicPath: string): { file: string; root: string } | undefined {
  if (isRegenerablePath(publicPath)) return { file: fileForPath(folders.clientDir, publicPath), root: folders.clientDir };
  if (IMAGE_PATH.test(publicPath))
    return { file: path.join(path.resolve(folders.imagesDir), ...publicPath.split('/').slice(2)), root: folders.imagesDir };
  return undefined;
}

/** Brings one served file in line with the stored page; undefined when nothing is stored or the path is not served. */
export async function applyStoredPage(
  store: Store,
  folders: SharedFolders,
  publicPath: string,
): Promise<{ outcome: FileOutcome; seq: number } | undefined> {
  const target = targetOf(folders, publicPath);
  if (!target) return undefined;
  const page = await store.pages.get(publicPath);
  if (!page) return undefined;
  const outcome = page.body ? await writeFileAtomic(target.file, page.body) : await deleteServedFile(target.file, target.root);
  return { outcome, seq: page.seq };
}

/** What a sync did, and the highest sequence it saw (the mark a later sync starts after). */
export type SyncCounts = { checked: number; written: number; deleted: number; throughSeq: number };

/**
 * How far before its mark a later sync looks again. Sequence numbers are taken before a put
 * commits, so a page with a lower number can become visible after one with a higher number; a put
 * is one statement and each server's worker stores one page at a time, so only a handful can be in
 * flight at once: a margin of this many sequence numbers covers them at little cost.
 */
export const SEQ_OVERLAP = 100;

/** How many times a sync after a reconnect is tried before it is left to the next reconnect. */
const RESYNC_ATTEMPTS = 8;

/**
 * Copies every stored page (or with `afterSeq`, every page changed after it) that differs from the
 * served file (compared by SHA-256); a no-op on a store one process owns.
 */
export async function syncStoredPages(store: Store, folders: SharedFolders, afterSeq = 0): Promise<SyncCounts> {
  const counts = { checked: 0, written: 0, deleted: 0, throughSeq: afterSeq };
  if (!store.pages.shared) return counts;
  for (const stored of await store.pages.list(afterSeq)) {
    counts.throughSeq = Math.max(counts.throughSeq, stored.seq);
    const target = targetOf(folders, stored.path);
    if (!target) continue;
    counts.checked++;
    if ((await localSha256(target.file)) === stored.sha256) continue;
    const applied = await applyStoredPage(store, folders, stored.path);
    if (applied?.outcome === 'written') counts.written++;
    if (applied?.outcome === 'deleted') counts.deleted++;
  }
  return counts;
}

export type FollowOptions = {
  /** This server's id: notes of its own puts are skipped (it wrote the file already). */
  owner: string;
  /** Another server ran this search job (re-indexed a bundle in its own folder): run it here too. */
  onSearchJob: (jobPath: string) => void;
  /** Another server's page was copied into this server's folder. */
  onApplied?: (publicPath: string, outcome: FileOutcome) => void;
  /**
   * The highest sequence a full sync already brought into the folder (the one before serving): the
   * sync after LISTEN then checks only later pages instead of hashing every served file again.
   */
  syncedThrough?: number;
  log: (line: string) => void;
};

/**
 * Listens for pages other servers store and copies each into `clientDir`, one at a time in the
 * order heard; a page heard again with an older sequence than the one applied is skipped. Syncs
 * after LISTEN (so nothing falls between) and again after a reconnect, each time only the pages
 * changed since the highest sequence already synced or heard (less SEQ_OVERLAP); a full sync
 * without `syncedThrough`.
 */
export async function followStoredPages(store: Store, folders: SharedFolders, options: FollowOptions): Promise<() => Promise<void>> {
  const applied = new Map<string, number>();
  /** The highest sequence synced or heard: what the next sync starts after (undefined: sync everything). */
  let mark = options.syncedThrough;
  let chain: Promise<unknown> = Promise.resolve();
  const run = (work: () => Promise<unknown>) => {
    chain = chain.then(work).catch((error: unknown) => options.log(`[publish] copying a stored page failed: ${(error as Error).message}`));
    return chain;
  };
  let stopped = false;
  const syncOnce = async (why: string) => {
    const started = Date.now();
    const afterSeq = mark === undefined ? 0 : Math.max(0, mark - SEQ_OVERLAP);
    const counts = await syncStoredPages(store, folders, afterSeq);
    mark = Math.max(mark ?? 0, counts.throughSeq);
    options.log(
      `[publish] synced stored pages (${why}, after sequence ${afterSeq}) in ${Date.now() - started} ms: ${counts.checked} checked, ${counts.written} written, ${counts.deleted} deleted`,
    );
  };
  const sync = (why: string) => run(() => syncOnce(why));
  /** After a reconnect a failed sync (the database left again) is retried: pages stored meanwhile must not wait for the next drop. */
  const resync = (why: string) =>
    run(async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await syncOnce(why);
        } catch (error) {
          if (stopped || attempt >= RESYNC_ATTEMPTS) throw error;
          await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 250 * 2 ** attempt)));
        }
      }
    });
  const stop = await store.pages.listen(
    (note) => {
      // Not before the first sync has a mark: that sync must still be a full one.
      if (mark !== undefined) mark = Math.max(mark, note.seq);
      if (note.origin === options.owner) return;
      if (searchJobOf(note.path)) {
        options.onSearchJob(note.path);
        return;
      }
      void run(async () => {
        if ((applied.get(note.path) ?? 0) >= note.seq) return;
        const result = await applyStoredPage(store, folders, note.path);
        if (!result) return;
        applied.set(note.path, result.seq);
        options.onApplied?.(note.path, result.outcome);
      });
    },
    () => void resync('the listening connection came back'),
  );
  await sync('start');
  return async () => {
    stopped = true;
    await stop();
    await chain;
  };
}

/**
 * A stored page removal (tombstone) is kept this long, then pruned, so the table holds one row per live
 * page plus a week of removals. A server away longer misses the removal; its render manifest then names
 * an older article version, and the reconcile at start deletes the file.
 */
const PAGE_TOMBSTONE_MAX_AGE_MS = 7 * 86_400_000;

/** Prunes stored page removals older than a week (any server may: the delete is idempotent). */
export async function pruneStoredRemovals(store: Store, log: Logger): Promise<void> {
  const pruned = await store.pages.pruneRemovals(Date.now() - PAGE_TOMBSTONE_MAX_AGE_MS);
  if (pruned)
    log.info({ pruned }, `[publish] pruned ${pruned} stored page removals older than ${PAGE_TOMBSTONE_MAX_AGE_MS / 86_400_000} days`);
}
