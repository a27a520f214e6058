/**
 * Long loops on the server's one thread (parsing a feed, sanitising and storing its items) give the
 * event loop a turn every few milliseconds, so readers and other requests never queue behind them.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** How long a loop may hold the thread before it lets the event loop run (readers wait at most about this). */
export const SLICE_MS = 4;

/**
 * A checkpoint for a long loop: `await slice()` once per item yields a turn of the event loop (I/O
 * and timers run) whenever `budgetMs` has passed since the last turn, and costs nothing otherwise.
 */
export function timeSlicer(budgetMs = SLICE_MS): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < budgetMs) return;
    await nextTurn();
    since = performance.now();
  };
}
