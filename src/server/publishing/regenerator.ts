/**
 * The publishing engine: plans which served files are stale, renders them through an injected
 * `Renderer`, writes (atomically, with compressed twins) or removes them, and re-indexes their search
 * bundles. The server's regeneration worker and `npm run rebuild` both drive it, so a page written by
 * either is written the same way.
 */
import path from 'node:path';
import type { Store } from '../../store/types.ts';
import { searchDay } from '../clock.ts';
import type { Compressor } from './compress.ts';
import { deleteServedFile, writeFileAtomic, type FileOutcome, type PreparedWrite } from './files.ts';
import { fileForPath, isRegenerablePath, listRenderedPaths, listSearchBundles, planPublicPaths, type OrderMark } from './paths.ts';
import { createRenderJournal, takeRenderJournal } from './render-journal.ts';
import { computePageInputs, planRender, statOf, type PageInput, type RenderState } from './render-inputs.ts';
import { monthOfWeek, searchJobOf } from './search-index.ts';
import { staleWeeks } from './search-periods.ts';
import { syncSearchBundles, type PeriodIndexResult } from './search-indexer.ts';

/**
 * A page rendered for the current data (with what the renderer found out about its file, when it was
 * given it), or word that it does not exist (its file is removed).
 */
export type RenderOutcome = { kind: 'page'; body: Uint8Array; input?: string; prepared?: PreparedWrite } | { kind: 'missing' };
/** Renders a public path; `file` is the served file it goes to, which a renderer may compare and compress for. */
export type Renderer = (publicPath: string, file?: string) => Promise<RenderOutcome>;

export type RegeneratorOptions = {
  /** The served folder (OUT_DIR/client). */
  clientDir: string;
  render: Renderer;
  /** Makes the compressed twins of the files it writes. @default compressBody (in libuv's pool) */
  compress?: Compressor;
  /** The server's worker notes each page it writes in the render journal, so the next rebuild keeps it; `warn` hears a failed note. */
  journal?: { warn: (message: string) => void };
};

/** One path brought in line: what happened to its file, the bytes rendered (undefined: removed) and how long it took. */
export type Regenerated = { outcome: FileOutcome; body: Uint8Array | undefined; ms: number };

/** What an incremental run has to do: render (inputs changed), adopt (the worker already wrote them from today's inputs), remove. */
export type ChangePlan = {
  inputs: Map<string, PageInput>;
  render: string[];
  adopt: string[];
  remove: string[];
  /** Removes the render journal this plan absorbed; call once the render state naming its pages is written. */
  discardJournal: () => void;
};

export type Regenerator = {
  readonly clientDir: string;
  /** Renders one public path and brings its file in line (written, unchanged, deleted or absent). */
  regenerate(publicPath: string): Promise<Regenerated>;
  /** Removes the served file of a path the data no longer has. */
  remove(publicPath: string): Promise<FileOutcome>;
  /**
   * Every path to check in a reconcile: files the data no longer has first (they disappear within moments), then every
   * public path newest first, with where its front pages and recent articles end (planPublicPaths). `stale`: how many of
   * the first paths are files the data no longer has (those this folder alone holds).
   */
  planAll(store: Store): Promise<{ paths: string[]; marks: OrderMark[]; stale: number }>;
  /** The paths whose inputs changed since `state` (the rebuild's plan), reading the worker's render journal. */
  planChanged(store: Store, state: RenderState): Promise<ChangePlan>;
  /** The page states to record after a run: `current` paths get their input and the file's stat, the rest keep `previous`. */
  stateOf(inputs: ReadonlyMap<string, PageInput>, previous?: RenderState['pages'], current?: ReadonlySet<string>): RenderState['pages'];
  /**
   * Re-indexes the search bundles of the changed search months (and the bundles named by `pending`
   * search jobs), as the server's tiers for today are planned; answers the search jobs it could not run here.
   */
  reindexChanged(
    store: Store,
    months: ReadonlySet<string>,
    pending?: readonly string[],
    /** The articles whose own record changed: a month indexed by weeks re-indexes the weeks holding them (and those that lost one). */
    changed?: ReadonlySet<string>,
  ): Promise<{ results: PeriodIndexResult[]; left: string[] }>;
};

export function createRegenerator(options: RegeneratorOptions): Regenerator {
  const clientDir = path.resolve(options.clientDir);
  const journal = options.journal ? createRenderJournal(clientDir) : undefined;

  async function regenerate(publicPath: string): Promise<Regenerated> {
    if (!isRegenerablePath(publicPath)) throw new Error(`Refusing to regenerate ${publicPath}`);
    const started = performance.now();
    const file = fileForPath(clientDir, publicPath);
    const rendered = await options.render(publicPath, file);
    const outcome =
      rendered.kind === 'page'
        ? await writeFileAtomic(file, rendered.body, options.compress, rendered.prepared)
        : await deleteServedFile(file, clientDir);
    if (journal && outcome === 'written' && rendered.kind === 'page' && rendered.input !== undefined) {
      // Only spares the next rebuild a render: a failure here costs that render, never the page.
      await journal
        .record(publicPath, rendered.input, file)
        .catch((error: unknown) => options.journal!.warn(`render journal: ${String(error)}`));
    }
    return { outcome, body: rendered.kind === 'page' ? rendered.body : undefined, ms: performance.now() - started };
  }

  return {
    clientDir,
    regenerate,
    remove: (publicPath) => deleteServedFile(fileForPath(clientDir, publicPath), clientDir),
    async planAll(store) {
      const { paths: wanted, marks } = await planPublicPaths(store);
      const stale = listRenderedPaths(clientDir, new Set(wanted));
      return {
        paths: [...stale, ...wanted],
        marks: marks.map((mark) => ({ ...mark, end: mark.end + stale.length })),
        stale: stale.length,
      };
    },
    async planChanged(store, state) {
      const inputs = await computePageInputs(store);
      const taken = takeRenderJournal(clientDir);
      const plan = planRender(inputs, state.pages, listRenderedPaths(clientDir, inputs), clientDir, taken.entries);
      return { inputs, ...plan, discardJournal: taken.discard };
    },
    stateOf: (inputs, previous, current) => pageStatesOf(clientDir, inputs, previous, current),
    async reindexChanged(store, months, pending = [], changed) {
      // A changed article of a closed month re-indexes that month, or the weeks of it that changed when
      // it is indexed by weeks; one of this month re-indexes this month so far and the head.
      const today = searchDay();
      const bundles = await listSearchBundles(store, today);
      const dirty = new Set<string>();
      const weeksOf = (month: string) => new Map([...bundles].filter(([name]) => monthOfWeek(name) === month));
      for (const month of months) {
        if (month >= today.slice(0, 7)) {
          for (const name of bundles.keys()) if (name.startsWith('head-') || name.startsWith(`${month}-`)) dirty.add(name);
        } else if (bundles.has(month)) dirty.add(month);
        else for (const week of await staleWeeks(clientDir, weeksOf(month), changed)) dirty.add(week);
      }
      const left: string[] = [];
      for (const jobPath of pending) {
        const job = searchJobOf(jobPath);
        if (job?.kind !== 'bundle') {
          if (job) left.push(jobPath);
          continue;
        }
        if (bundles.has(job.bundle)) {
          dirty.add(job.bundle);
          continue;
        }
        // A server's job for a month the plan lays out in weeks: the weeks its pages changed (see staleWeeks).
        const weeks = job.bundle < today.slice(0, 7) ? weeksOf(job.bundle) : new Map<string, string[]>();
        if (weeks.size > 0) for (const week of await staleWeeks(clientDir, weeks)) dirty.add(week);
        else left.push(jobPath);
      }
      const { results } = await syncSearchBundles(clientDir, bundles, dirty);
      return { results, left };
    },
  };
}

/** The page states after a render: `current` paths (all when absent) get their input and the file's stat, the rest keep `previous`. */
export function pageStatesOf(
  clientDir: string,
  inputs: ReadonlyMap<string, PageInput>,
  previous: RenderState['pages'] = {},
  current: ReadonlySet<string> | undefined = undefined,
): RenderState['pages'] {
  const pages: RenderState['pages'] = {};
  for (const [publicPath, input] of inputs) {
    if (current && !current.has(publicPath) && previous[publicPath]) {
      pages[publicPath] = previous[publicPath];
      continue;
    }
    const stat = statOf(clientDir, publicPath);
    if (stat) pages[publicPath] = { i: input.i, ...stat, ...(input.p ? { p: input.p } : {}), ...(input.t ? { t: input.t } : {}) };
  }
  return pages;
}
