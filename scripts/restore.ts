/**
 * `npm run restore -- FILE`: restores a backup archive into an empty DATA_DIR (lowdb), or into the
 * empty database at DATABASE_URL and DATA_DIR/images. The whole archive is checked first; a damaged
 * or foreign one, or a target that is not empty, is refused with one sentence (exit code 2) and
 * nothing changes.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { getConfig } from '../src/config.ts';
import { BackupRefusedError } from '../src/server/backup/archive.ts';
import { restoreBackup } from '../src/server/backup/restore.ts';
import { createProgress } from './progress.ts';

const USAGE = `Usage: npm run restore -- FILE

Restores a backup written by npm run backup: into DATA_DIR, which must be new or empty (lowdb), or,
with DATABASE_URL, into that empty database and DATA_DIR/images. Nothing changes unless the whole
archive checks out.`;

function fail(message: string, code: number): never {
  console.error(message);
  process.exit(code);
}

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({ allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } });
  } catch (error) {
    fail(`${(error as Error).message}\n\n${USAGE}`, 2);
  }
  if (parsed.values.help) return void console.log(USAGE);
  if (parsed.positionals.length !== 1) fail(USAGE, 2);
  const config = getConfig();
  const dataDir = path.resolve(config.DATA_DIR);
  const progress = createProgress('[restore]');
  const result = await restoreBackup({
    file: parsed.positionals[0]!,
    dataDir,
    databaseUrl: config.DATABASE_URL,
    onProgress: (step, done, total) => progress.update(step, done, total),
  }).finally(() => progress.stop());
  const { manifest } = result;
  const where = manifest.store.kind === 'lowdb' ? dataDir : `the database at DATABASE_URL and ${path.join(dataDir, 'images')}`;
  console.log(
    `[restore] restored the backup of ${manifest.createdAt} (Meridian ${manifest.appVersion}, ${result.files} files) into ${where}.`,
  );
  console.log(
    '[restore] It has a store id of its own, so no served folder passes for its pages. Next: `npm start` builds the site from it and serves it; ' +
      '`npm run serve` on an existing build re-renders every page (/api/health reports `reconciling` until done).',
  );
}

// A wait that can never end would let Node exit quietly with code 0: say so, and fail.
let finished = false;
process.once('beforeExit', () => {
  if (finished) return;
  console.error('[restore] stopped before the end (a step waited for nothing); nothing was put in place.');
  process.exitCode = 1;
});

main()
  .then(() => (finished = true))
  .catch((error: unknown) => {
    if (error instanceof BackupRefusedError || (error as Error)?.name === 'BackupRefusedError')
      fail(`[restore] ${(error as Error).message}`, 2);
    fail(`[restore] failed, nothing was changed: ${(error as Error)?.message ?? error}`, 1);
  });
