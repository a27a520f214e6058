/**
 * Restoring a backup archive into an empty data folder (lowdb) or an empty database and images folder
 * (PostgreSQL). The archive is read and checked whole into a temp folder beside (or inside) the
 * target; only then is anything put in place, so a refusal or a failure leaves the target as it was.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { DUMP_NAME, type BackupManifest } from '../../schemas/backup.ts';
import {
  databaseIsEmpty,
  isLeftOut,
  lockDataDir,
  LOWDB_LAYOUT,
  NEWEST_MIGRATION,
  RESTORE_PREFIX,
  renewLowdbStoreId,
  restoreDatabaseFrom,
} from '../../store/backup.ts';
import { storeWriterPid } from '../../store/index.ts';
import { BackupRefusedError, readArchive, type ExtractPlan, type Progress } from './archive.ts';

export type RestoreOptions = {
  file: string;
  dataDir: string;
  databaseUrl: string | undefined;
  onProgress?: Progress;
};

export type RestoreResult = { manifest: BackupManifest; files: number; storeId: string };

/** Entries of a folder that count as data (a stale lock or temp file does not). */
function dataEntries(dir: string): string[] {
  try {
    return fs.readdirSync(dir).filter((name) => !isLeftOut(name) || name === 'outbox' || name === 'tmp');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

function checkReadable(file: string): void {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    throw new BackupRefusedError(`${file} does not exist.`);
  }
  if (!stat.isFile()) throw new BackupRefusedError(`${file} is not a file.`);
}

/** Refuses an archive of the other store, or one from a newer version than this code. */
function checkStore(manifest: BackupManifest, name: string, wanted: 'lowdb' | 'postgres'): void {
  const store = manifest.store;
  if (store.kind !== wanted)
    throw new BackupRefusedError(
      store.kind === 'postgres'
        ? `${name} holds a PostgreSQL store and DATABASE_URL is not set: set it to an empty database to restore it there.`
        : `${name} holds a lowdb data folder and DATABASE_URL is set: unset it to restore into an empty DATA_DIR (npm run db:import can then move it into the database).`,
    );
  if (store.kind === 'lowdb' && store.layout > LOWDB_LAYOUT)
    throw new BackupRefusedError(
      `${name} holds a data folder in layout ${store.layout}, newer than this version reads (${LOWDB_LAYOUT}): restore it with Meridian ${manifest.appVersion}.`,
    );
  if (store.kind === 'postgres' && Math.max(0, ...store.migrations) > NEWEST_MIGRATION)
    throw new BackupRefusedError(
      `${name} holds a database migrated past this version's schema: restore it with Meridian ${manifest.appVersion}.`,
    );
}

/** Where a lowdb archive's entries go: its `data/` under `root`, nothing else. */
function lowdbPlan(name: string, root: string): ExtractPlan {
  return (manifest) => {
    checkStore(manifest, name, 'lowdb');
    return (entry) => (entry.startsWith('data/') ? path.join(root, entry.slice('data/'.length)) : undefined);
  };
}

/**
 * An existing empty DATA_DIR (it may be a mount point, which cannot be renamed over): its lock keeps
 * a server off it, the archive goes into a temp folder inside it, and once it checks out each of its
 * top-level entries is renamed into place.
 */
async function restoreIntoEmptyFolder(
  file: string,
  name: string,
  dataDir: string,
  storeId: string,
  onProgress?: Progress,
): Promise<RestoreResult> {
  let release: () => void;
  try {
    release = lockDataDir(dataDir);
  } catch (error) {
    if ((error as Error).name !== 'StoreLockedError') throw error;
    throw new BackupRefusedError(`A server is using ${dataDir}: restore into an empty DATA_DIR no process uses.`);
  }
  const temp = path.join(dataDir, `${RESTORE_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    fs.mkdirSync(temp);
    const manifest = await readArchive(file, lowdbPlan(name, temp), onProgress);
    await renewLowdbStoreId(temp, storeId);
    for (const entry of fs.readdirSync(temp)) fs.renameSync(path.join(temp, entry), path.join(dataDir, entry));
    return { manifest, files: manifest.files.length, storeId };
  } finally {
    fs.rmSync(temp, { recursive: true, force: true });
    release();
  }
}

/** Restores the archive; a BackupRefusedError (nothing changed) or another error (nothing changed either, unless it says so). */
export async function restoreBackup(options: RestoreOptions): Promise<RestoreResult> {
  const file = path.resolve(options.file);
  const name = path.basename(file);
  checkReadable(file);
  const dataDir = path.resolve(options.dataDir);
  const storeId = randomUUID();
  if (!options.databaseUrl) {
    const holder = storeWriterPid(dataDir);
    if (holder)
      throw new BackupRefusedError(`A server (pid ${holder}) is using ${dataDir}: restore into an empty DATA_DIR no process uses.`);
    if (dataEntries(dataDir).length > 0) throw new BackupRefusedError(`${dataDir} is not empty: restore into a new or empty DATA_DIR.`);
    if (fs.existsSync(dataDir)) return restoreIntoEmptyFolder(file, name, dataDir, storeId, options.onProgress);
    fs.mkdirSync(path.dirname(dataDir), { recursive: true });
    // Beside the target, on its file system: the rename at the end puts the whole folder in place at once.
    const temp = path.join(
      path.dirname(dataDir),
      `.${path.basename(dataDir)}${RESTORE_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}`,
    );
    fs.mkdirSync(temp);
    try {
      const manifest = await readArchive(file, lowdbPlan(name, temp), options.onProgress);
      await renewLowdbStoreId(temp, storeId);
      try {
        // Only an absent folder (or an empty one) can be renamed over: one made meanwhile is left alone.
        fs.renameSync(temp, dataDir);
      } catch (error) {
        if (['ENOTEMPTY', 'EEXIST'].includes((error as NodeJS.ErrnoException).code ?? ''))
          throw new BackupRefusedError(`${dataDir} was made while the archive was read: restore into a new or empty DATA_DIR.`);
        throw error;
      }
      return { manifest, files: manifest.files.length, storeId };
    } finally {
      fs.rmSync(temp, { recursive: true, force: true });
    }
  }

  // PostgreSQL: the database and DATA_DIR/images must both be empty; the folder's lock keeps a server off it meanwhile.
  let release: () => void;
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    release = lockDataDir(dataDir);
  } catch (error) {
    if ((error as Error).name !== 'StoreLockedError') throw error;
    throw new BackupRefusedError(`A server is using ${dataDir}: stop it before restoring.`);
  }
  const temp = path.join(dataDir, `${RESTORE_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    const images = path.join(dataDir, 'images');
    if (dataEntries(images).length > 0) throw new BackupRefusedError(`${images} is not empty: restore into a DATA_DIR without images.`);
    if (!(await databaseIsEmpty(options.databaseUrl)))
      throw new BackupRefusedError('The database at DATABASE_URL is not empty: restore into a new database (createdb).');
    fs.mkdirSync(temp);
    const manifest = await readArchive(
      file,
      (manifest) => {
        checkStore(manifest, name, 'postgres');
        return (entry) => (entry === DUMP_NAME || entry.startsWith('data/images/') ? path.join(temp, entry) : undefined);
      },
      options.onProgress,
    );
    if (manifest.store.kind !== 'postgres') throw new Error('unreachable');
    await restoreDatabaseFrom(options.databaseUrl, path.join(temp, DUMP_NAME), manifest.store.pgDumpMajor, storeId);
    const restoredImages = path.join(temp, 'data', 'images');
    if (fs.existsSync(restoredImages)) {
      await fsp.rm(images, { recursive: true, force: true });
      await fsp.rename(restoredImages, images);
    }
    return { manifest, files: manifest.files.length, storeId };
  } finally {
    fs.rmSync(temp, { recursive: true, force: true });
    release();
  }
}
