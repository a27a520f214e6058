/**
 * Notices Pagefind's indexing process ending. Pagefind's Node API answers each call when its process
 * replies and does not notice that process dying (killed, out of memory): a call in flight would wait
 * forever and every later one fail ("backend is closed"). Node's `child_process` diagnostics channel
 * hands us every child this process starts, so the end of Pagefind's is an event, not something to poll.
 */
import type { ChildProcess } from 'node:child_process';
import diagnosticsChannel from 'node:diagnostics_channel';
import path from 'node:path';
import * as pagefind from 'pagefind';

/** Pagefind's processes that have started and not ended yet. */
const running = new Set<ChildProcess>();
/** Those a close of ours ends: their exit is asked for, not a death. */
const closing = new WeakSet<ChildProcess>();
/** Called when one ends without being asked to (the builds in flight). */
const onDeath = new Set<() => void>();

diagnosticsChannel.subscribe('child_process', (message) => {
  const child = (message as { process: ChildProcess }).process;
  // The channel speaks before the spawn; the command is known once it has started.
  child.once('spawn', () => {
    if (!path.basename(child.spawnfile ?? '').startsWith('pagefind')) return;
    running.add(child);
    child.once('exit', () => {
      running.delete(child);
      if (closing.has(child)) return;
      // The service still holds the dead process: closing it fails the calls in flight, and the next call starts a new one.
      void closePagefind();
      for (const listener of onDeath) listener();
    });
  });
});

/** Closes Pagefind's service (and so its process); the next call starts a new one. */
export async function closePagefind(): Promise<void> {
  for (const child of running) closing.add(child);
  await pagefind.close();
}

/** Process ids of Pagefind's running processes (one while the service is open). */
export function pagefindPids(): number[] {
  return [...running].flatMap((child) => (child.pid === undefined ? [] : [child.pid]));
}

/** Watches for Pagefind's process dying while a build runs; `died` says whether it did, `stop` ends the watch. */
export function watchPagefind(): { died: () => boolean; stop: () => void } {
  let dead = false;
  const listener = () => {
    dead = true;
  };
  onDeath.add(listener);
  return { died: () => dead, stop: () => onDeath.delete(listener) };
}
