/**
 * Taking a backup: a point-in-time copy of DATA_DIR (lowdb) or a dump of the database and the
 * images (PostgreSQL), written as one archive with its manifest. Used by `npm run backup`, by the
 * internal call it makes to a running server, and by the server's schedule.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { isSameSecret, signMessage } from '../../security/secrets.ts';
import { DUMP_NAME, type BackupManifest } from '../../schemas/backup.ts';
import { describeLowdbFolder, dumpDatabaseTo, snapshotDataDir, type Snapshot } from '../../store/backup.ts';
import { nowIso } from '../clock.ts';
import type { Runtime } from '../runtime.ts';
import { AppError } from '../errors.ts';
import { getAppSecret } from '../images/upload-urls.ts';
import { writeArchive, type Progress } from './archive.ts';

/** The version in package.json of the code running (found from the working folder up). */
export function appVersion(): string {
  if (process.env.npm_package_version) return process.env.npm_package_version;
  for (let dir = process.cwd(); ; dir = path.dirname(dir)) {
    try {
      const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'meridian-news' && pkg.version) return pkg.version;
    } catch {
      // Not here: one folder up.
    }
    if (path.dirname(dir) === dir) return 'unknown';
  }
}

/** `meridian-backup-20261127T033000Z.tar.gz`: sorts by time, and names nothing else. */
export function defaultBackupName(now = new Date(nowIso())): string {
  return `meridian-backup-${now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}.tar.gz`;
}
export const BACKUP_NAME = /^meridian-backup-\d{8}T\d{6}Z\.tar\.gz$/;

/** The key of the internal snapshot call: an HMAC of the app secret, so the secret itself never travels. */
export function backupKey(secret: string): string {
  return signMessage(secret, 'meridian-news:internal-backup-snapshot');
}

function isBackupKeyValid(secret: string, presented: string | null): boolean {
  return isSameSecret(presented, backupKey(secret));
}

/** Refuses an internal snapshot call without the key (before its body is even read). */
export async function assertBackupKey(runtime: Runtime, presentedKey: string | null): Promise<void> {
  if (!isBackupKeyValid(await getAppSecret(runtime), presentedKey)) throw new AppError(403, 'Invalid backup key');
}

/**
 * The internal call of `npm run backup` while this server holds DATA_DIR (lowdb): links the folder
 * into a staging folder under the store's write gate and answers it; the script archives and removes it.
 */
export async function snapshotForScript(runtime: Runtime, pid: number): Promise<Snapshot> {
  if (runtime.config.DATABASE_URL)
    throw new AppError(409, 'This server keeps its store in PostgreSQL: npm run backup dumps it with pg_dump');
  if (!runtime.store.snapshotDataDir) throw new AppError(409, 'This store takes no folder snapshot');
  return runtime.store.snapshotDataDir({ ownerPid: pid });
}

export type BackupOptions = {
  dataDir: string;
  databaseUrl: string | undefined;
  /** Where the archive goes. */
  file: string;
  /**
   * lowdb: takes DATA_DIR as one point in time into a staging folder (a running server's write gate,
   * asked through its internal call; or this process holding the folder's lock). Default: here.
   */
  snapshot?: () => Promise<Snapshot>;
  onProgress?: Progress;
  log?: (line: string) => void;
};

export type BackupResult = { file: string; manifest: BackupManifest; bytes: number; heldMs: number | undefined };

/** Writes the backup archive; the staging folder is removed whatever happens. */
export async function takeBackup(options: BackupOptions): Promise<BackupResult> {
  const log = options.log ?? (() => {});
  const dataDir = path.resolve(options.dataDir);
  const createdAt = nowIso();
  let snapshot: Snapshot | undefined;
  try {
    let store: BackupManifest['store'];
    let files: { path: string; size: number }[];
    if (options.databaseUrl) {
      // The images are written once under their content's hash and never changed: they need no gate.
      snapshot = await snapshotDataDir(dataDir, { onlyImages: true });
      log(`[backup] dumping the database (pg_dump) and ${snapshot.files.length} image files`);
      const dump = await dumpDatabaseTo(options.databaseUrl, path.join(snapshot.dir, DUMP_NAME));
      store = {
        kind: 'postgres',
        migrations: dump.migrations,
        ...(dump.storeId ? { storeId: dump.storeId } : {}),
        articlesVersion: dump.articlesVersion,
        pgDumpMajor: dump.pgDumpMajor,
        serverMajor: dump.serverMajor,
      };
      files = [...snapshot.files, { path: DUMP_NAME, size: (await fsp.stat(path.join(snapshot.dir, DUMP_NAME))).size }];
    } else {
      snapshot = await (options.snapshot ?? (() => snapshotDataDir(dataDir)))();
      log(
        `[backup] took ${snapshot.files.length} files of ${dataDir} as one point in time (` +
          (snapshot.heldMs === undefined ? "under the folder's lock)" : `the server held writes ${snapshot.heldMs.toFixed(0)} ms)`),
      );
      const described = describeLowdbFolder(path.join(snapshot.dir, 'data'));
      store = {
        kind: 'lowdb',
        layout: described.layout,
        ...(described.storeId ? { storeId: described.storeId } : {}),
        articlesVersion: described.articlesVersion,
        ...(snapshot.heldMs === undefined ? {} : { heldMs: Math.round(snapshot.heldMs) }),
      };
      files = snapshot.files;
    }
    const manifest = await writeArchive(
      options.file,
      snapshot.dir,
      files,
      { appVersion: appVersion(), createdAt, store },
      options.onProgress,
    );
    const bytes = (await fsp.stat(options.file)).size;
    return { file: path.resolve(options.file), manifest, bytes, heldMs: snapshot.heldMs };
  } finally {
    if (snapshot) await fsp.rm(snapshot.dir, { recursive: true, force: true });
  }
}
