/**
 * The running application: configuration, the open store and the hooks other subsystems plug into.
 * src/server/app.ts builds it once per process; the server hands it to every request (`locals.runtime`),
 * scripts to what they call, so the server script and the Astro bundle (each with its own copy of
 * this module) share one store: one lock, one set of in-memory indexes.
 */
import type { Config } from '../config.ts';
import { getConfig } from '../config.ts';
import type { ArticleRecord } from '../schemas/article.ts';
import type { FetchProgress } from '../schemas/source.ts';
import type { Job } from '../schemas/misc.ts';
import { openStore, type Store, type StoreOptions } from '../store/index.ts';
import type { Logger, RequestScope } from './log.ts';
import type { Metrics } from './metrics.ts';
import type { HealthRegistry } from './health.ts';
import type { Mailer } from './mail/transport.ts';
import type Stripe from 'stripe';
import type { WorkerActivity } from './publishing/activity.ts';
import type { ReconcileProgress } from './publishing/reconcile.ts';

/** One article before and after a write (undefined before = created, undefined after = deleted). */
export type ArticleChange = { before: ArticleRecord | undefined; after: ArticleRecord | undefined };

export type RuntimeHooks = {
  /** Called after article writes that may change public pages; the publishing pipeline enqueues regeneration here. */
  articlesChanged: Array<(changes: ArticleChange[]) => Promise<void> | void>;
  /** Called after a live coverage write (issue 35) with its article; the publishing pipeline queues the files it shows in. */
  liveChanged?: Array<(article: ArticleRecord) => Promise<void> | void>;
  /** Article writes under way, from before the store write until their hooks have run (see trackArticleWrite). */
  writesInFlight: number;
};

export type Runtime = {
  config: Config;
  store: Store;
  hooks: RuntimeHooks;
  /** Background services started with the server (scheduler, regeneration worker, feed fetcher). */
  services: Map<string, { stop(): Promise<void> | void }>;
  /** The folder readers are served from, once the HTTP server is attached (absent in builds and astro dev). */
  servedDir?: string;
  /** The one logger of the process (pino); its lines name the request they were written for. */
  log: Logger;
  /** The request scope `log` reads request ids from: the HTTP server runs each request in it. */
  requests: RequestScope;
  /** This runtime's Prometheus registry and the figures the server, the worker and the services keep. */
  metrics: Metrics;
  /** When the runtime started (Date.now()), for the uptime readiness reports. */
  startedAt: number;
  /** Set by a stop (SIGTERM) before the listener closes: readiness answers 503 from then on. */
  draining: boolean;
  /** Degraded states (a full disk, a database that is down): readiness answers 503 with them until they clear. */
  health: HealthRegistry;
  /** The SMTP transport, made from `config` on first use (src/server/mail/mailer.ts) and closed with the runtime. */
  mailer?: Mailer;
  /** Stripe's client and webhook secret (src/server/members/stripe-client.ts), made on first use; null when Stripe is not set up. */
  stripe?: { api: Stripe; webhookSecret: string } | null;
  /** The last briefing run asked for: the scheduler's and the internal endpoint's runs take turns (src/server/briefing/briefing.ts). */
  briefingTurn: Promise<unknown>;
  /** RSS fetches in flight by source id: the scheduler and fetch-now never fetch a source twice at once (ingest/feed-fetch.ts). */
  feedFetches: Map<string, Promise<unknown>>;
  /** Each source's fetch running now, else its last, by source id (ingest/fetch-progress.ts; the News Sources tab polls it). */
  fetchProgress: Map<string, FetchProgress>;
  /** The publishing service's state (publishing/service.ts), here because the Astro bundle loads its own copy of that module. */
  publishing?: {
    worker?: {
      wake(): void;
      reconcile(reason: string): Promise<void>;
      stop(): Promise<void>;
      stats(): { reconcilePending: number; reconcile: ReconcileProgress | undefined };
      activity(): WorkerActivity & { localJobs: Job[]; retryAt: Map<string, number> };
      retry(ids: readonly string[]): void;
    };
    counters: {
      batches: number;
      pagesQueued: number;
      lastBatchPages: number;
      maxBatchPages: number;
      /** Live coverage writes (issue 35) and the pages the last one queued. */
      liveUpdates?: number;
      lastLivePages?: number;
    };
    /** Queues pages that changed without an article write (tag curation, issue 35). */
    enqueue?: (paths: string[]) => Promise<void>;
  };
};

/** The parts of a runtime that coordinate work within the process, empty at start. */
export function createCoordination(): Pick<Runtime, 'briefingTurn' | 'feedFetches' | 'fetchProgress'> {
  return { briefingTurn: Promise.resolve(), feedFetches: new Map(), fetchProgress: new Map() };
}

export type RuntimeOptions = Pick<StoreOptions, 'lazyTextIndex'> & {
  /** The logger and request scope to use (the server makes them first, to log its start); made from the config when absent. */
  log?: { log: Logger; requests: RequestScope };
};

/** How long a query made for a request waits for its answer (docs/reliability.md: no answer later than 10 s). */
export const REQUEST_QUERY_TIMEOUT_MS = 7000;

/**
 * The store for rendering pages: the live one of the runtime this process started (src/server/app.ts),
 * or a read-only snapshot in a build process (which must not take the lock: the server may be running while cron rebuilds).
 */
export function useReadStore(): Promise<Store> {
  readStore ??= openStore(getConfig().DATA_DIR, 'read', { databaseUrl: getConfig().DATABASE_URL });
  return readStore;
}

/** Pages render from this process's live store once its runtime opens it (src/server/app.ts); `undefined` forgets it. */
export function setReadStore(store: Promise<Store> | undefined, only?: Promise<Store>): void {
  if (only === undefined || readStore === only) readStore = store;
}

let readStore: Promise<Store> | undefined;

/** Tells the subscribed subsystems which articles changed; counted in flight while the hooks run. */
export async function emitArticleChanges(runtime: Runtime, changes: ArticleChange[]): Promise<void> {
  if (changes.length === 0) return;
  await trackArticleWrite(runtime, async () => {
    for (const hook of runtime.hooks.articlesChanged) await hook(changes);
  });
}

/** Tells the subscribed subsystems that an article's live coverage or updates changed (not the article itself). */
export async function emitLiveChange(runtime: Runtime, article: ArticleRecord): Promise<void> {
  await trackArticleWrite(runtime, async () => {
    for (const hook of runtime.hooks.liveChanged ?? []) await hook(article);
  });
}

/**
 * Runs an article write: the store write and the emitArticleChanges that follows it. It counts as
 * in flight from before the store's version moves until the hooks have queued its pages, so no one
 * takes that version for rendered (the render manifest) while the change's pages are not yet queued.
 */
export async function trackArticleWrite<T>(runtime: Runtime, write: () => Promise<T>): Promise<T> {
  runtime.hooks.writesInFlight++;
  try {
    return await write();
  } finally {
    runtime.hooks.writesInFlight--;
  }
}

/** Whether an article write is between its store write and the end of its hooks (the render manifest waits for it). */
export function articleWritesPending(runtime: Runtime): boolean {
  return runtime.hooks.writesInFlight > 0;
}
