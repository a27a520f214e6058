/**
 * Several servers on one database (`store.pages.shared`): `npm run rebuild` takes each page it renders
 * or removes as a job of the shared queue, as a server's worker does. It claims the job (a server
 * holding it renders the page itself), stores the bytes or the removal and announces them, so every
 * server copies them into its own folder, then completes the job; a write that lands meanwhile
 * re-queues it, and a server renders it again with a later sequence, so the rebuild never puts older
 * bytes over a server's newer ones.
 */
import { randomUUID } from 'node:crypto';
import type { Store } from '../../store/types.ts';
import type { FileOutcome } from './files.ts';
import { searchJobPath } from './search-index.ts';

export type SharedQueue = {
  /** Takes the job of `publicPath`; false when a server holds it (that server renders, stores and announces the page). */
  claim(publicPath: string): Promise<boolean>;
  /** Stores the page's bytes (undefined: removed) for the other servers unless its file was unchanged, and gives the job up. */
  done(publicPath: string, outcome: FileOutcome, body: Uint8Array | undefined): Promise<void>;
  /** Tells every server to re-index a search bundle in its own folder (the rebuild re-indexed it in OUT_DIR). */
  reindexed(bundle: string): Promise<void>;
  counts: { stored: number; leftToServers: number };
};

export async function openSharedQueue(store: Store, paths: readonly string[], leaseMs: number): Promise<SharedQueue> {
  const owner = `rebuild-${randomUUID()}`;
  // Queued (and so started) one millisecond before now: a write after this re-queues the job.
  const startedAt = new Date(Date.now() - 1).toISOString();
  await store.jobs.enqueue(paths, startedAt);
  const wanted = new Set(paths);
  const jobs = new Map<string, string>();
  for (const job of await store.jobs.list(await store.jobs.size())) if (wanted.has(job.path)) jobs.set(job.path, job.id);
  const counts = { stored: 0, leftToServers: 0 };
  return {
    counts,
    async claim(publicPath) {
      const id = jobs.get(publicPath);
      const held = id !== undefined && (await store.jobs.claim(id, owner, Date.now() + leaseMs, Date.now()));
      if (!held) counts.leftToServers++;
      return held;
    },
    async done(publicPath, outcome, body) {
      // As the worker: a removal is stored even when this folder had no file (the servers' folders may).
      if (outcome !== 'unchanged') {
        await store.pages.put(publicPath, outcome === 'written' ? body : undefined, owner);
        counts.stored++;
      }
      await store.jobs.complete(jobs.get(publicPath)!, startedAt);
    },
    async reindexed(bundle) {
      await store.pages.put(searchJobPath(bundle), undefined, owner);
    },
  };
}
