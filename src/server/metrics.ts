/**
 * The server's Prometheus metrics (prom-client): one registry per runtime with the process, GC and
 * event-loop defaults, the HTTP, publishing, ingest and briefing figures, and store operation latency.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Store } from '../store/index.ts';

export type Metrics = {
  registry: Registry;
  /** Requests by route (a bounded label: the Astro route pattern, or what the static server answered itself), method and status. */
  httpRequests: Histogram<'route' | 'method' | 'status'>;
  /** Regeneration jobs waiting, read from the store at each scrape. */
  queueDepth: Gauge;
  /** Pages (and machine files) the regeneration worker rendered, by what happened to the file. */
  pagesRendered: Counter<'outcome'>;
  /** How long one page took: render, write and compressed twins. */
  renderSeconds: Histogram;
  /** How long one search job took (a bundle re-index or a compaction). */
  searchIndexSeconds: Histogram;
  /** Feed fetches by result: `ok`, `not_modified`, `failed`. */
  feedFetches: Counter<'result'>;
  /** Briefing deliveries by result: `sent`, `failed`, `unknown`. */
  briefingDeliveries: Counter<'result'>;
  /** Store calls by repository and operation. */
  storeSeconds: Histogram<'repository' | 'operation'>;
};

export type MetricsOptions = {
  /** The regeneration queue's depth (the queue depth gauge asks it at each scrape). */
  readQueueDepth?: () => Promise<number>;
  /** Process, GC and event-loop metrics (a server wants them; a unit test's many runtimes do not). @default true */
  defaults?: boolean;
};

/** How long a scrape waits for the queue depth: a database that does not answer must not hold Prometheus. */
const QUEUE_DEPTH_TIMEOUT_MS = 1000;

/** Rejects when `promise` takes longer than `ms` (the promise itself runs on). */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.defaults !== false) collectDefaultMetrics({ register: registry });
  const readQueueDepth = options.readQueueDepth;
  return {
    registry,
    httpRequests: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP requests by route, method and status, and how long they took',
      labelNames: ['route', 'method', 'status'],
      buckets: [0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'meridian_regeneration_queue_depth',
      help: 'Regeneration jobs waiting in the stored queue',
      registers: [registry],
      async collect() {
        if (!readQueueDepth) return;
        // On a timeout or an error the last value read stays: the scrape itself must not fail.
        const depth = await withTimeout(readQueueDepth(), QUEUE_DEPTH_TIMEOUT_MS, 'the job queue').catch(() => undefined);
        if (depth !== undefined) this.set(depth);
      },
    }),
    pagesRendered: new Counter({
      name: 'meridian_pages_rendered_total',
      help: 'Pages the regeneration worker rendered, by outcome (written, unchanged, deleted, absent, failed)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    renderSeconds: new Histogram({
      name: 'meridian_page_render_duration_seconds',
      help: 'Time to render one page and write it with its compressed twins',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers: [registry],
    }),
    searchIndexSeconds: new Histogram({
      name: 'meridian_search_index_duration_seconds',
      help: 'Time of one search job (a bundle re-index or a compaction)',
      buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
    feedFetches: new Counter({
      name: 'meridian_feed_fetches_total',
      help: 'RSS source fetches by result (ok, not_modified, failed)',
      labelNames: ['result'],
      registers: [registry],
    }),
    briefingDeliveries: new Counter({
      name: 'meridian_briefing_deliveries_total',
      help: 'Briefing e-mails by result (sent, failed, unknown)',
      labelNames: ['result'],
      registers: [registry],
    }),
    storeSeconds: new Histogram({
      name: 'meridian_store_operation_duration_seconds',
      help: 'Store calls by repository and operation, and how long they took',
      labelNames: ['repository', 'operation'],
      buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers: [registry],
    }),
  };
}

/** The repositories of a Store whose asynchronous calls are timed. */
const REPOSITORIES = [
  'articles',
  'counters',
  'comments',
  'sources',
  'subscribers',
  'briefings',
  'users',
  'audit',
  'sessions',
  'jobs',
  'limits',
  'meta',
  'revisions',
  'trash',
  'analytics',
  'pages',
] as const satisfies readonly (keyof Store)[];

/** Times every call of `repository` that answers a promise; everything else passes through untouched. */
function timeRepository<T extends object>(name: string, repository: T, seconds: Metrics['storeSeconds']): T {
  const wrapped = new Map<string, unknown>();
  return new Proxy(repository, {
    get(target, property) {
      // The target as receiver: repositories keep their state in private fields.
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function' || typeof property !== 'string' || property === 'constructor') return value;
      let timed = wrapped.get(property);
      if (!timed) {
        const observe = seconds.labels(name, property);
        const method = value as (...args: unknown[]) => unknown;
        timed = (...args: unknown[]) => {
          const started = performance.now();
          const result = method.apply(target, args);
          if (!(result instanceof Promise)) return result;
          return result.finally(() => observe.observe((performance.now() - started) / 1000));
        };
        wrapped.set(property, timed);
      }
      return timed;
    },
  });
}

/** The store with each repository's asynchronous calls timed into `seconds`; the same store otherwise. */
export function instrumentStore(store: Store, seconds: Metrics['storeSeconds']): Store {
  const repositories = new Map<string, unknown>(REPOSITORIES.map((name) => [name, timeRepository(name, store[name], seconds)]));
  return new Proxy(store, {
    get(target, property) {
      if (typeof property === 'string' && repositories.has(property)) return repositories.get(property);
      return Reflect.get(target, property, target);
    },
  });
}
