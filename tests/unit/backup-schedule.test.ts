/**
 * Scheduled backups on a real store (lowdb, or PostgreSQL with TEST_STORE=pg) with the server's clock
 * moved: nothing before BACKUP_TIME, one archive a day at or after it, BACKUP_KEEP kept, BACKUP_COMMAND
 * run on the new archive (its failure logged, not fatal), and one backup a day across servers on one database.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { setClock } from '../../src/server/clock.ts';
import { startBackupScheduler } from '../../src/server/backup/schedule.ts';
import { openStore } from '../../src/store/index.ts';
import type { Runtime } from '../../src/server/runtime.ts';
import { articleRecord, closeQuietly, collectingLog, makeRuntime, makeTempDir } from './support.ts';
import { databaseFor, testingPostgres } from '../helpers/postgres.ts';
import { BACKUP_NAME } from '../../src/server/backup/backup.ts';

const runtimes: Runtime[] = [];
afterEach(async () => {
  setClock(undefined);
  vi.restoreAllMocks();
  for (const runtime of runtimes.splice(0)) await closeQuietly(runtime.store);
});

/** A runtime over a fresh store with the backup settings of `env`. */
async function backupRuntime(env: Record<string, string>, dataDir = makeTempDir()): Promise<Runtime> {
  const runtime = await makeRuntime(dataDir);
  runtime.config = parseConfig({ DATA_DIR: runtime.config.DATA_DIR, SEED: 'none', DATABASE_URL: runtime.config.DATABASE_URL, ...env });
  runtimes.push(runtime);
  return runtime;
}

const archives = (dir: string) =>
  fs
    .readdirSync(dir)
    .filter((n) => BACKUP_NAME.test(n))
    .sort();

describe('scheduled backups', () => {
  it('takes one archive a day at BACKUP_TIME, keeps BACKUP_KEEP and runs BACKUP_COMMAND on it', async () => {
    const backups = makeTempDir('meridian-backups-');
    const shipped = makeTempDir('meridian-shipped-');
    // A name with a space and a quote: the path reaches the command as "$1", never as command text.
    const runtime = await backupRuntime({
      BACKUP_DIR: backups,
      BACKUP_TIME: '03:30',
      BACKUP_KEEP: '3',
      BACKUP_COMMAND: `cp "$1" '${shipped}/' && echo "$1" >> '${shipped}/log'`,
    });
    await runtime.store.articles.insert(articleRecord({ slug: 'kept-by-the-schedule' }));
    // Older archives and a partial file a killed backup left: the oldest go once the new one is complete.
    for (const day of ['20200101', '20200102', '20200103'])
      fs.writeFileSync(path.join(backups, `meridian-backup-${day}T033000Z.tar.gz`), 'old');
    fs.writeFileSync(path.join(backups, 'meridian-backup-20200104T033000Z.tar.gz.999999999.partial'), 'cut short');
    const scheduler = startBackupScheduler(runtime);
    try {
      setClock(() => Date.parse('2031-03-04T03:29:00Z'));
      await scheduler.tick();
      expect(archives(backups)).toHaveLength(3);

      setClock(() => Date.parse('2031-03-04T03:31:00Z'));
      await scheduler.tick();
      const after = archives(backups);
      expect(after).toEqual([
        'meridian-backup-20200102T033000Z.tar.gz',
        'meridian-backup-20200103T033000Z.tar.gz',
        'meridian-backup-20310304T033100Z.tar.gz',
      ]);
      expect(fs.readdirSync(backups).some((n) => n.endsWith('.partial'))).toBe(false);
      const made = path.join(backups, after[2]!);
      expect(fs.readFileSync(path.join(shipped, 'log'), 'utf8')).toBe(`${made}\n`);
      expect(fs.readFileSync(path.join(shipped, after[2]!))).toEqual(fs.readFileSync(made));

      // Once a day: a later tick the same day does nothing, the next day makes another.
      setClock(() => Date.parse('2031-03-04T23:59:00Z'));
      await scheduler.tick();
      expect(archives(backups)).toHaveLength(3);
      setClock(() => Date.parse('2031-03-05T04:00:00Z'));
      await scheduler.tick();
      expect(archives(backups).at(-1)).toBe('meridian-backup-20310305T040000Z.tar.gz');
      expect(archives(backups)).toHaveLength(3);
    } finally {
      scheduler.stop();
    }
  });

  it('logs a failing BACKUP_COMMAND without its output and keeps the archive', async () => {
    const backups = makeTempDir('meridian-backups-');
    const errors: string[] = [];
    const runtime = await backupRuntime({ BACKUP_DIR: backups, BACKUP_COMMAND: 'echo secret-token-in-output >&2; exit 3' });
    runtime.log = collectingLog(errors);
    const scheduler = startBackupScheduler(runtime);
    try {
      setClock(() => Date.parse('2031-03-04T12:00:00Z'));
      await scheduler.tick();
      expect(archives(backups)).toHaveLength(1);
      expect(errors.join('\n')).toMatch(/BACKUP_COMMAND failed \(exit code 3\); the archive stays at/);
      expect(errors.join('\n')).not.toContain('secret-token');
    } finally {
      scheduler.stop();
    }
  });

  it.runIf(testingPostgres())('takes one backup a day across two servers on one database', async () => {
    const first = await backupRuntime({ BACKUP_DIR: makeTempDir('meridian-backups-a-') });
    const url = first.config.DATABASE_URL!;
    expect(url).toBe(await databaseFor(first.config.DATA_DIR));
    const secondDir = makeTempDir();
    const second: Runtime = {
      ...first,
      config: parseConfig({ DATA_DIR: secondDir, SEED: 'none', DATABASE_URL: url, BACKUP_DIR: makeTempDir('meridian-backups-b-') }),
      store: await openStore(secondDir, 'write', { databaseUrl: url }),
    };
    runtimes.push(second);
    const schedulers = [startBackupScheduler(first), startBackupScheduler(second)];
    try {
      setClock(() => Date.parse('2031-03-04T05:00:00Z'));
      await Promise.all(schedulers.map((s) => s.tick()));
      expect(archives(first.config.BACKUP_DIR!).length + archives(second.config.BACKUP_DIR!).length).toBe(1);
    } finally {
      for (const s of schedulers) s.stop();
    }
  });
});
