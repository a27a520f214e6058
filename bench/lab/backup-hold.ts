/**
 * How long a backup holds the lowdb store's writes, and how long the event loop waits meanwhile:
 * `node bench/lab/backup-hold.ts DATA_DIR` opens the store in DATA_DIR (make one with
 * bench/generate-store.ts), takes three snapshots while a write (a meta key) starts halfway into
 * each, and prints the hold, the write's wait and the longest event-loop delay. Not part of a run.
 */
import fs from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { openStore } from '../../src/store/index.ts';
import { snapshotDataDir } from '../../src/store/backup.ts';

const dir = process.argv[2];
if (!dir) throw new Error('Usage: node bench/lab/backup-hold.ts DATA_DIR');
const store = await openStore(dir, 'write', { databaseUrl: undefined, lazyTextIndex: true });
try {
  for (let run = 1; run <= 3; run++) {
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const started = performance.now();
    const snapshot = snapshotDataDir(dir);
    // A write that arrives while the folder is being linked waits for the hold to end.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const writeStarted = performance.now();
    const write = store.meta.set('benchWrite', run).then(() => performance.now() - writeStarted);
    const [taken, waited] = await Promise.all([snapshot, write]);
    delay.disable();
    console.log(
      `run ${run}: ${taken.files.length} files, writes held ${taken.heldMs.toFixed(0)} ms, a write waited ${waited.toFixed(0)} ms, ` +
        `event loop delay max ${(delay.max / 1e6).toFixed(1)} ms, snapshot done in ${(performance.now() - started).toFixed(0)} ms`,
    );
    fs.rmSync(taken.dir, { recursive: true, force: true });
  }
} finally {
  await store.close();
}
