/**
 * Scheduled backups inside the server: once a day at BACKUP_TIME (in BRIEFING_TZ, the newsroom's
 * zone) an archive into BACKUP_DIR, the oldest beyond BACKUP_KEEP removed, and BACKUP_COMMAND run on
 * the new one to copy it off the machine. With several servers on one database, one of them per day.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Runtime } from '../runtime.ts';
import { localTime, minutesOf } from '../briefing/clock.ts';
import { nowMs } from '../clock.ts';
import { BACKUP_NAME, defaultBackupName, takeBackup } from './backup.ts';

/** How often the schedule looks at the clock. */
const TICK_MS = 30_000;
/** After a failed backup, the next try waits this long (the day's claim is given back). */
const RETRY_AFTER_FAILURE_MS = 15 * 60_000;
/** A BACKUP_COMMAND still running after this long is stopped. */
const COMMAND_TIMEOUT_MS = 60 * 60_000;
/** The store's record of the last day a scheduled backup ran (survives a restart, also on lowdb). */
const LAST_DAY_KEY = 'backupLastDay';

/** The schedule's log lines, tagged like the other services' (`[backup] ...`, component `backup`). */
function log(runtime: Runtime, line: string, error = false): void {
  const backupLog = runtime.log.child({ component: 'backup' });
  if (error) backupLog.error(`[backup] ${line}`);
  else backupLog.info(`[backup] ${line}`);
}

/** Removes the oldest archives beyond `keep` and partial files of processes that are gone; answers the names removed. */
export async function pruneBackups(dir: string, keep: number): Promise<string[]> {
  const names = await fsp.readdir(dir);
  const archives = names.filter((n) => BACKUP_NAME.test(n)).sort();
  const removed = archives.slice(0, Math.max(0, archives.length - keep));
  for (const name of names) {
    const partial = /^meridian-backup-.*\.(\d+)\.partial$/.exec(name);
    if (partial && Number(partial[1]) !== process.pid && !isAlive(Number(partial[1]))) removed.push(name);
  }
  for (const name of removed) await fsp.rm(path.join(dir, name), { force: true });
  return removed;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Runs BACKUP_COMMAND with the archive's path as "$1" (`sh -c COMMAND backup-command PATH`): the
 * path is an argument, never part of the command's text. Answers how it ended; its output is not logged.
 */
export function runBackupCommand(command: string, file: string): Promise<{ ok: boolean; detail: string }> {
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', command, 'backup-command', file], { timeout: COMMAND_TIMEOUT_MS, maxBuffer: 1024 * 1024 }, (error) => {
      if (!error) return resolve({ ok: true, detail: 'exit code 0' });
      const failure = error as NodeJS.ErrnoException & { code?: number | string; signal?: string; killed?: boolean };
      resolve({
        ok: false,
        detail: failure.killed ? 'stopped after an hour' : failure.signal ? `signal ${failure.signal}` : `exit code ${failure.code}`,
      });
    });
  });
}

/** Claims `date` for this server: no backup recorded for it in the store, and first of the servers sharing it. */
async function claimDay(runtime: Runtime, date: string, now: number): Promise<{ previous: string } | undefined> {
  const previous = (await runtime.store.meta.get<string>(LAST_DAY_KEY)) ?? '';
  if (previous === date) return undefined;
  const claim = await runtime.store.limits.hit(`backup-day:${date}`, 2 * 86_400_000, now);
  if (claim.count > 1) return undefined;
  await runtime.store.meta.set(LAST_DAY_KEY, date);
  return { previous };
}

/** One scheduled backup, its pruning and its command; answers the archive's path. */
export async function runScheduledBackup(runtime: Runtime): Promise<string> {
  const config = runtime.config;
  const dir = path.resolve(config.BACKUP_DIR!);
  await fsp.mkdir(dir, { recursive: true });
  const file = path.join(dir, defaultBackupName());
  const snapshotDataDir = runtime.store.snapshotDataDir?.bind(runtime.store);
  const result = await takeBackup({
    dataDir: config.DATA_DIR,
    databaseUrl: config.DATABASE_URL,
    file,
    // Through the open store, whose write gate every write passes (lowdb); PostgreSQL dumps instead.
    ...(snapshotDataDir && !config.DATABASE_URL ? { snapshot: () => snapshotDataDir() } : {}),
  });
  log(
    runtime,
    `wrote ${result.file} (${(result.bytes / 1024 / 1024).toFixed(1)} MB, ${result.manifest.files.length} files` +
      (result.heldMs === undefined ? ')' : `, writes held ${result.heldMs.toFixed(0)} ms)`),
  );
  const removed = await pruneBackups(dir, config.BACKUP_KEEP);
  if (removed.length)
    log(runtime, `removed ${removed.length} older archive(s) beyond BACKUP_KEEP=${config.BACKUP_KEEP}: ${removed.join(', ')}`);
  if (config.BACKUP_COMMAND) {
    const ran = await runBackupCommand(config.BACKUP_COMMAND, result.file);
    if (ran.ok) log(runtime, `BACKUP_COMMAND done for ${path.basename(result.file)}`);
    else log(runtime, `BACKUP_COMMAND failed (${ran.detail}); the archive stays at ${result.file}`, true);
  }
  return result.file;
}

/** Starts the schedule when BACKUP_DIR is set; the clock is the server's (tests move it). */
export function startBackupScheduler(runtime: Runtime): { stop(): void; tick(): Promise<void> } {
  const config = runtime.config;
  let running: Promise<void> | undefined;
  /** No new try before this after a failure (performance.now(): a wall clock moved back must not stretch the wait). */
  let quietUntil = 0;
  const tick = async () => {
    if (!config.BACKUP_DIR || running) return running;
    if (performance.now() < quietUntil) return;
    const now = nowMs();
    const local = localTime(new Date(now), config.BRIEFING_TZ);
    if (local.minutes < minutesOf(config.BACKUP_TIME)) return;
    running = (async () => {
      let claimed: { previous: string } | undefined;
      try {
        claimed = await claimDay(runtime, local.date, now);
        if (claimed) await runScheduledBackup(runtime);
      } catch (error) {
        quietUntil = performance.now() + RETRY_AFTER_FAILURE_MS;
        log(runtime, `the scheduled backup of ${local.date} failed: ${(error as Error).message}; trying again in 15 minutes`, true);
        if (claimed) {
          await runtime.store.meta.set(LAST_DAY_KEY, claimed.previous).catch(() => {});
          await runtime.store.limits.delete(`backup-day:${local.date}`).catch(() => {});
        }
      } finally {
        running = undefined;
      }
    })();
    return running;
  };
  const timer = setInterval(() => void tick(), TICK_MS);
  timer.unref();
  return {
    tick,
    stop() {
      clearInterval(timer);
    },
  };
}

/** Whether BACKUP_DIR is usable (checked at start, so a typo is said at once, not at 03:30). */
export function checkBackupDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.accessSync(dir, fs.constants.W_OK);
}
