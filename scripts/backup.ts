/**
 * `npm run backup [-- FILE]`: one archive of the store while the site runs and takes writes. lowdb:
 * DATA_DIR as one point in time (a running server links it under its write gate when asked; with no
 * server, this script takes the folder's lock for the linking). PostgreSQL: pg_dump plus DATA_DIR/images.
 */
import http from 'node:http';
import https from 'node:https';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { getConfig } from '../src/config.ts';
import { storeWriterPid } from '../src/store/index.ts';
import { lockDataDir, PgToolError, readStoredAppSecret, snapshotDataDir, type Snapshot } from '../src/store/backup.ts';
import { backupSnapshotResultSchema } from '../src/schemas/backup.ts';
import { backupKey, defaultBackupName, takeBackup } from '../src/server/backup/backup.ts';
import { readServerAddress } from '../src/server/briefing/service.ts';
import { createProgress } from './progress.ts';

const USAGE = `Usage: npm run backup [-- FILE]

Writes one archive (.tar.gz with a manifest) of the store in DATA_DIR, or of the database at
DATABASE_URL with DATA_DIR/images, also while the server runs. FILE defaults to
meridian-backup-<UTC time>.tar.gz in BACKUP_DIR, or in the current folder.`;

function fail(message: string, code = 1): never {
  console.error(message);
  process.exit(code);
}

function postJson(url: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; text: string }> {
  const payload = JSON.stringify(body);
  const client = url.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(
      url,
      { method: 'POST', headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload), ...headers } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

/** Asks the server holding DATA_DIR to link it into a staging folder under its write gate. */
async function askServer(dataDir: string, pid: number): Promise<Snapshot> {
  const address = readServerAddress(dataDir);
  if (!address || address.pid !== pid)
    fail(
      `The data folder ${dataDir} is in use by process ${pid}, which is not a listening Meridian server. Try again when it has started or stopped.`,
      2,
    );
  const secret = getConfig().APP_SECRET ?? (await readStoredAppSecret(dataDir, undefined));
  if (!secret) fail('The running server has no app secret yet; try again in a few seconds.', 2);
  console.log(`[backup] the server (pid ${pid}) holds ${dataDir}: asking it to take the folder as one point in time`);
  const { status, text } = await postJson(
    `${address.origin}/api/backup/snapshot`,
    { 'X-Backup-Key': backupKey(secret) },
    { pid: process.pid },
  );
  if (status !== 200) fail(`The server answered ${status}: ${text}`);
  const snapshot = backupSnapshotResultSchema.parse(JSON.parse(text));
  // This script removes the folder when done: only one of the server's staging folders in DATA_DIR.
  const dir = path.resolve(snapshot.dir);
  if (path.dirname(dir) !== dataDir || !path.basename(dir).startsWith(`.backup-${process.pid}-`))
    fail(`The server answered a staging folder outside ${dataDir} (${dir}); nothing was written.`);
  return { ...snapshot, dir };
}

/** With no server: the folder's lock for the linking (no server starts meanwhile), released before the archive is written. */
async function snapshotHere(dataDir: string): Promise<Snapshot> {
  let release: () => void;
  try {
    release = lockDataDir(dataDir);
  } catch (error) {
    // A server started between the check and the lock: ask it instead.
    const pid = (error as Error).name === 'StoreLockedError' ? storeWriterPid(dataDir) : undefined;
    if (pid === undefined) throw error;
    return askServer(dataDir, pid);
  }
  try {
    return await snapshotDataDir(dataDir);
  } finally {
    release();
  }
}

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({ allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } });
  } catch (error) {
    fail(`${(error as Error).message}\n\n${USAGE}`);
  }
  if (parsed.values.help) return void console.log(USAGE);
  if (parsed.positionals.length > 1) fail(USAGE);
  const config = getConfig();
  const dataDir = path.resolve(config.DATA_DIR);
  const file = path.resolve(parsed.positionals[0] ?? path.join(config.BACKUP_DIR ?? '.', defaultBackupName()));
  if (fs.existsSync(file)) fail(`${file} exists already: name another file.`, 2);
  if (!config.DATABASE_URL && !fs.existsSync(dataDir)) fail(`${dataDir} does not exist: there is no store to back up (set DATA_DIR).`, 2);
  const progress = createProgress('[backup]');
  const holder = config.DATABASE_URL ? undefined : storeWriterPid(dataDir);
  const result = await takeBackup({
    dataDir,
    databaseUrl: config.DATABASE_URL,
    file,
    snapshot: () => (holder === undefined ? snapshotHere(dataDir) : askServer(dataDir, holder)),
    onProgress: (step, done, total) => progress.update(step, done, total),
    log: (line) => {
      progress.stop();
      console.log(line);
    },
  }).finally(() => progress.stop());
  const store = result.manifest.store;
  console.log(
    `[backup] wrote ${result.file}: ${(result.bytes / 1024 / 1024).toFixed(1)} MB, ${result.manifest.files.length} files, ` +
      (store.kind === 'lowdb'
        ? `the lowdb store (layout ${store.layout}${store.heldMs === undefined ? '' : `, writes held ${store.heldMs} ms`})`
        : `the PostgreSQL database (pg_dump ${store.pgDumpMajor}) and its images`),
  );
  console.log(
    `[backup] restore it with: npm run restore -- ${result.file}   (into an empty DATA_DIR${store.kind === 'postgres' ? ' and an empty database' : ''})`,
  );
}

// A wait that can never end would let Node exit quietly with code 0: say so, and fail.
let finished = false;
process.once('beforeExit', () => {
  if (finished) return;
  console.error('[backup] stopped before the end (a step waited for nothing); no archive was written.');
  process.exitCode = 1;
});

main()
  .then(() => (finished = true))
  .catch((error: unknown) => {
    if (error instanceof PgToolError || (error as Error)?.name === 'PgToolError') fail(`[backup] ${(error as Error).message}`);
    console.error('[backup] failed:', error);
    process.exit(1);
  });
