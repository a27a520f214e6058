/**
 * Several servers on one database (`store.pages.shared`), one build: drawing every page again for a
 * new build (the reconcile at a start after a deploy) is shared instead of done by each server. The
 * newest-first order is cut into batches, queued as jobs of the shared queue; each server that runs
 * the build claims the next free batch (its lease held while it draws it), draws it as a reconcile
 * and stores each changed page, and copies the pages the others stored. A batch of a killed server
 * is taken over when its lease runs out.
 *
 * The batches are written once, by the server that leads (the one holding the lead job), beside the
 * pages as `/.sweep/<build>`, so every server draws the same paths for a batch; once the sweep is over
 * the row says only that it finished (and from which build), which tells a server started later that
 * the pages are drawn.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Store } from '../../store/types.ts';
import type { Logger } from '../log.ts';
import { holdJobClaim } from './job-claims.ts';
import { SEQ_OVERLAP, syncStoredPages, type SharedFolders, type SyncCounts } from './shared-pages.ts';

/** Job and stored-page paths of the sweeps: never served, never drawn as pages. */
export const SWEEP_PREFIX = '/.sweep/';
/** The fewest pages in a batch: a claim and its completion cost two queries, small beside drawing 50 pages. */
const MIN_BATCH_PAGES = 50;
/** The most batches a sweep has: few queued jobs (the worker reads the queue's first 1,000), still even work for a few servers. */
const MAX_BATCHES = 64;
/** How long the lead job is waited for before looking again (another server writes the batches). */
const LEAD_WAIT_MS = 100;

export function isSweepPath(jobPath: string): boolean {
  return jobPath.startsWith(SWEEP_PREFIX);
}

function sweepPath(build: string): string {
  return `${SWEEP_PREFIX}${encodeURIComponent(build)}`;
}

function batchPath(build: string, index: number): string {
  return `${sweepPath(build)}/${index}`;
}

/** `paths` in order, cut into at most MAX_BATCHES runs of at least MIN_BATCH_PAGES (the front pages stay in the first). */
export function splitIntoBatches(paths: readonly string[]): string[][] {
  const size = Math.max(MIN_BATCH_PAGES, Math.ceil(paths.length / MAX_BATCHES));
  const batches: string[][] = [];
  for (let at = 0; at < paths.length; at += size) batches.push(paths.slice(at, at + size));
  return batches;
}

/**
 * What `/.sweep/<build>` holds: the batches while the sweep runs, then only that it finished. `from`:
 * the build the pages were drawn by before (a server whose pages another build drew needs a sweep of its own).
 */
type SweepRecord = { from: string; batches?: string[][]; finished?: true };

const encodeRecord = (record: SweepRecord): Uint8Array => gzipSync(JSON.stringify(record));

async function readRecord(store: Store, marker: string): Promise<{ record: SweepRecord; seq: number } | undefined> {
  const stored = await store.pages.get(marker);
  return stored?.body ? { record: JSON.parse(gunzipSync(stored.body).toString('utf8')) as SweepRecord, seq: stored.seq } : undefined;
}

export type SharedSweepDeps = {
  store: Store;
  /** This server's name in claims and stored pages. */
  owner: string;
  /** How long a claim holds without renewal (JOB_LEASE_MS). */
  leaseMs: number;
  /** The served folders the pages other servers stored are copied into. */
  folders: SharedFolders;
  log: Logger;
};

/** A batch this server claimed: its paths, drawn as a reconcile, then `done()`. */
export type SweepBatch = { index: number; of: number; paths: string[] };

export type SharedSweep = {
  /** Pages in every batch. */
  readonly pages: number;
  /** Pages of the batches this server drew. */
  drawnHere(): number;
  /** Pages of the first batches, up to the first one not known to be drawn (what readers get of the new build, newest first). */
  leadingDone(): number;
  /** Pages of the batches not known to be drawn yet (this server's current one included). */
  pagesLeft(): number;
  /** Claims the next free batch ('wait': the rest are held by other servers; 'finished': every batch is drawn). */
  next(): Promise<SweepBatch | 'wait' | 'finished'>;
  /** The claimed batch is drawn: its job is completed and the claim given up. */
  done(): Promise<void>;
  /** Once 'finished': copies what the other servers stored since the sweep began and marks the sweep over. */
  finish(): Promise<SyncCounts>;
  /** Stops renewing the claim held (a stop): the batch goes to another server when its lease runs out. */
  release(): Promise<void>;
};

/**
 * Joins the sweep of `build` over `paths` (this server's plan), for pages drawn by build `from`,
 * starting it unless another server has: answers undefined when a server already finished it (the
 * pages it stored were copied into this server's folder at start).
 */
export async function joinSharedSweep(
  deps: SharedSweepDeps,
  sweep: { build: string; from: string },
  paths: readonly string[],
): Promise<SharedSweep | undefined> {
  const { store, owner, leaseMs, log } = deps;
  const { build, from } = sweep;
  const marker = sweepPath(build);
  let lead: { id: string; queuedAt: string } | undefined;
  let joined: { record: SweepRecord; seq: number } | undefined;
  while (!joined) {
    const found = await readRecord(store, marker);
    if (found?.record.batches) joined = found;
    else if (found?.record.finished && found.record.from === from) return undefined;
    else {
      // None yet, or an older one's (the same build deployed again): the server holding the lead job
      // writes the batches, the others wait for them (a lead killed midway: its claim runs out).
      if (!lead) {
        const queuedAt = new Date().toISOString();
        await store.jobs.enqueue([marker], queuedAt);
        const job = (await store.jobs.list(await store.jobs.size())).find((queued) => queued.path === marker);
        lead = job && { id: job.id, queuedAt };
      }
      if (lead && (await store.jobs.claim(lead.id, owner, Date.now() + leaseMs, Date.now()))) {
        const again = await readRecord(store, marker);
        if (JSON.stringify(again) === JSON.stringify(found)) {
          const record: SweepRecord = { from, batches: splitIntoBatches(paths) };
          const seq = await store.pages.put(marker, encodeRecord(record), owner);
          await store.jobs.enqueue(
            record.batches!.map((_, index) => batchPath(build, index)),
            lead.queuedAt,
          );
          joined = { record, seq };
          log.info(
            { build, batches: record.batches!.length, pages: paths.length },
            `[publish] drawing every page for build ${build} with the other servers: ${paths.length} pages in ${record.batches!.length} batches`,
          );
        }
        await store.jobs.complete(lead.id, lead.queuedAt);
        lead = undefined;
      } else {
        await new Promise((resolve) => setTimeout(resolve, LEAD_WAIT_MS));
      }
    }
  }
  const batches = joined.record.batches!;
  const startedAt = joined.seq;
  const wanted = new Map(batches.map((_, index) => [batchPath(build, index), index]));
  /** Batches still queued: index to job id (a batch done by any server leaves the queue). */
  const open = new Map<number, string>();
  for (const job of await store.jobs.list(await store.jobs.size())) {
    const index = wanted.get(job.path);
    if (index !== undefined) open.set(index, job.id);
  }
  let current: { index: number; id: string; claimedAt: string; release: () => Promise<void> } | undefined;
  let drawnHere = 0;

  return {
    pages: batches.reduce((sum, batch) => sum + batch.length, 0),
    drawnHere: () => drawnHere,
    leadingDone() {
      let pages = 0;
      for (let index = 0; index < batches.length && !open.has(index); index++) pages += batches[index]!.length;
      return pages;
    },
    pagesLeft: () => [...open.keys()].reduce((sum, index) => sum + batches[index]!.length, 0),
    async next() {
      for (const [index, id] of [...open].sort((a, b) => a[0] - b[0])) {
        const claimedAt = new Date(Date.now() - 1).toISOString();
        if (await store.jobs.claim(id, owner, Date.now() + leaseMs, Date.now())) {
          current = { index, id, claimedAt, release: holdJobClaim(store, { id, path: batchPath(build, index) }, owner, leaseMs, log) };
          return { index, of: batches.length, paths: batches[index]! };
        }
        // Held by another server, or gone: drawn by one.
        if (!(await store.jobs.get(id))) open.delete(index);
      }
      return open.size > 0 ? 'wait' : 'finished';
    },
    async done() {
      if (!current) return;
      const { index, id, claimedAt, release } = current;
      current = undefined;
      await release();
      await store.jobs.complete(id, claimedAt);
      open.delete(index);
      drawnHere += batches[index]!.length;
    },
    async finish() {
      // The pages stored since the batches were written: those the NOTIFYs brought are unchanged by now.
      const counts = await syncStoredPages(store, deps.folders, Math.max(0, startedAt - SEQ_OVERLAP));
      await store.pages.put(marker, encodeRecord({ from: joined.record.from, finished: true }), owner);
      return counts;
    },
    async release() {
      await current?.release();
      current = undefined;
    },
  };
}
