/**
 * How long a backup holds the lowdb store's writes, and how long the event loop waits meanwhile:
 * `node bench/lab/backup-hold.ts DATA_DIR` opens the store in DATA_DIR (make one with
 * bench/generate-store.ts), takes three snapshots while writes (a meta key) run one after another,
 * and prints the hold, the longest write and the longest event-loop delay. Not part of a run.
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
    let done = false;
    let writes = 0;
    let longest = 0;
    // Writes one after another all through the backup: the longest of them is what a writer waited.
    const writer = (async () => {
      while (!done) {
        const at = performance.now();
        await store.meta.set('benchWrite', ++writes);
        longest = Math.max(longest, performance.now() - at);
      }
    })();
    const taken = await snapshotDataDir(dir);
    done = true;
    await writer;
    delay.disable();
    console.log(
      `run ${run}: ${taken.files.length} files in ${(performance.now() - started).toFixed(0)} ms, writes held ${taken.heldMs?.toFixed(0)} ms, ` +
        `${writes} writes meanwhile, the longest ${longest.toFixed(0)} ms, event loop delay max ${(delay.max / 1e6).toFixed(1)} ms`,
    );
    fs.rmSync(taken.dir, { recursive: true, force: true });
  }
} finally {
  await store.close();
}
