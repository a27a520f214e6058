/**
 * What this server's worker is doing, for the dashboard's Publishing panel: the page and search job
 * each lane runs now, the last page jobs finished (a small ring, per server), the last search build,
 * and failure messages made fit to show (no file paths of this machine).
 */
import type { RecentRender, RenderingNow } from '../../schemas/publishing.ts';
import type { FileOutcome } from './files.ts';

/** How many finished page jobs the ring keeps. */
export const RECENT_RENDERS = 20;

export type WorkerActivity = {
  /** The page job the pages lane runs now (a reconcile step too), if any. */
  renderingNow: RenderingNow[];
  /** The search job the search lane runs now, if any. */
  searchBuilding: RenderingNow | undefined;
  /** The last page jobs finished, newest first. */
  recent: RecentRender[];
  lastSearch: { at: string; ms: number } | undefined;
};

export type ActivityLog = {
  /** Marks `path` as running in `lane` until the returned function is called. */
  begin(lane: 'pages' | 'search', path: string): () => void;
  /** Records a finished page job (search jobs go to `noteSearch`). */
  notePage(path: string, outcome: FileOutcome, ms: number): void;
  noteSearch(ms: number): void;
  read(): WorkerActivity;
};

export function createActivityLog(capacity = RECENT_RENDERS, now: () => number = Date.now): ActivityLog {
  const running = { pages: new Map<number, RenderingNow>(), search: new Map<number, RenderingNow>() };
  let seq = 0;
  /** Oldest first; trimmed to `capacity` on every note. */
  const recent: RecentRender[] = [];
  let lastSearch: WorkerActivity['lastSearch'];
  const iso = () => new Date(now()).toISOString();

  return {
    begin(lane, path) {
      const key = ++seq;
      running[lane].set(key, { path, since: iso() });
      return () => void running[lane].delete(key);
    },
    notePage(path, outcome, ms) {
      // A missing page without a file: nothing changed on disk.
      recent.push({ path, outcome: outcome === 'absent' ? 'unchanged' : outcome, at: iso(), ms: Math.round(ms * 10) / 10 });
      if (recent.length > capacity) recent.splice(0, recent.length - capacity);
    },
    noteSearch(ms) {
      lastSearch = { at: iso(), ms: Math.round(ms) };
    },
    read: () => ({
      renderingNow: [...running.pages.values()],
      searchBuilding: [...running.search.values()][0],
      recent: recent.toReversed(),
      lastSearch,
    }),
  };
}

/**
 * A job's error as the queue keeps it and the panel shows it: the message, with the served folder
 * (`clientDir`, a path of this machine) cut from it, so `ENOTDIR: not a directory, open '/article/x/index.html'`.
 */
export function describeJobError(error: unknown, clientDir: string): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replaceAll(clientDir.replace(/[\\/]+$/, ''), '');
}
