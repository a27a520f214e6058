/** The optional CDN purge hook: PURGE_URL receives a POST with the paths the worker rewrote or removed. */
import { logOncePerMinute, type Logger } from '../log.ts';

export type PurgeBody = { paths: string[]; urls: string[] };

/** A request to PURGE_URL is cut off after this long: a hanging endpoint holds one socket, never the worker. */
export const PURGE_TIMEOUT_MS = 5000;
/** The waits before each retry of a failed notification; after the last one fails, its paths are given up. */
export const PURGE_RETRY_DELAYS_MS: readonly number[] = [5_000, 30_000, 2 * 60_000, 10 * 60_000, 30 * 60_000];
/** Paths one request names at most. */
const MAX_PATHS_PER_REQUEST = 500;
/** Paths held while the hook does not answer; past this the oldest are given up (the CDN's own expiry covers them). */
const MAX_PENDING_PATHS = 20_000;

export type Purger = {
  /** Queues paths and sends them now, or with the request or retry already under way. Never throws, never waits. */
  send(paths: readonly string[]): void;
  /** Ends the retries after one last try of what is pending; answers within PURGE_TIMEOUT_MS. */
  stop(): Promise<void>;
  /** Paths not yet taken by the hook. */
  pending(): number;
};

export type PurgerOptions = {
  url: string;
  siteUrl: string;
  log: Logger;
  /** @default PURGE_TIMEOUT_MS */
  timeoutMs?: number;
  /** @default PURGE_RETRY_DELAYS_MS */
  retryDelaysMs?: readonly number[];
};

/** Why one notification failed, and whether a later try may succeed (an endpoint down or busy, not one refusing us). */
type Failure = { reason: string; retry: boolean };

async function postPurge(options: PurgerOptions, paths: string[]): Promise<Failure | undefined> {
  const body: PurgeBody = { paths, urls: paths.map((p) => new URL(p, options.siteUrl).href) };
  try {
    const response = await fetch(options.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(options.timeoutMs ?? PURGE_TIMEOUT_MS),
    });
    await response.body?.cancel().catch(() => {});
    if (response.ok) return undefined;
    const status = response.status;
    return { reason: `it answered HTTP ${status}`, retry: status >= 500 || status === 408 || status === 429 };
  } catch (error) {
    const name = (error as Error).name;
    const reason =
      name === 'TimeoutError' ? `no answer within ${(options.timeoutMs ?? PURGE_TIMEOUT_MS) / 1000} s` : (error as Error).message;
    return { reason, retry: true };
  }
}

/**
 * The purge hook's sender: one request at a time, so a hanging endpoint holds one socket for at most
 * PURGE_TIMEOUT_MS, and paths changed meanwhile go with the next request. A failed request is tried
 * again after 5 s, 30 s, 2, 10 and 30 minutes, with whatever changed since; failures are logged once
 * a minute. The worker only calls send(), which never waits: publishing never waits for the CDN.
 */
export function createPurger(options: PurgerOptions): Purger {
  const delays = options.retryDelaysMs ?? PURGE_RETRY_DELAYS_MS;
  const log = options.log;
  /** In order of first change. */
  let pending = new Set<string>();
  let inFlight: Promise<void> | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  /** Failed tries in a row. */
  let failures = 0;
  let stopped = false;

  function trim(): void {
    if (pending.size <= MAX_PENDING_PATHS) return;
    const dropped = pending.size - MAX_PENDING_PATHS;
    pending = new Set([...pending].slice(dropped));
    logOncePerMinute(
      log,
      'purge:dropped',
      { dropped },
      `[publish] purge hook: ${dropped} path(s) given up, more than ${MAX_PENDING_PATHS} waiting for an endpoint that does not answer`,
    );
  }

  function flush(): void {
    if (inFlight || pending.size === 0) return;
    const batch = [...pending].slice(0, MAX_PATHS_PER_REQUEST);
    for (const path of batch) pending.delete(path);
    inFlight = postPurge(options, batch).then((failure) => {
      inFlight = undefined;
      if (!failure) {
        if (failures > 0)
          log.info({ paths: batch.length, tries: failures + 1 }, `[publish] purge hook answers again after ${failures} failed tries`);
        failures = 0;
        if (!stopped) flush();
        return;
      }
      if (!failure.retry) {
        log.error(
          { paths: batch.length, err: failure.reason },
          `[publish] purge hook refused ${batch.length} path(s): ${failure.reason}; not retried (check PURGE_URL)`,
        );
        if (!stopped) flush();
        return;
      }
      // Back in front: they changed first.
      pending = new Set([...batch, ...pending]);
      failures++;
      if (failures > delays.length) {
        log.error(
          { paths: pending.size, tries: failures, err: failure.reason },
          `[publish] purge hook failed ${failures} times (${failure.reason}): ${pending.size} path(s) given up; the CDN serves them until they expire`,
        );
        pending.clear();
        failures = 0;
        return;
      }
      const delay = delays[failures - 1]!;
      logOncePerMinute(
        log,
        'purge:failed',
        { paths: pending.size, tries: failures, err: failure.reason },
        `[publish] purge hook failed for ${batch.length} path(s) (${failure.reason}); ${pending.size} path(s) wait, next try in ${delay / 1000} s`,
      );
      if (stopped) return;
      retryTimer = setTimeout(() => {
        retryTimer = undefined;
        flush();
      }, delay);
      retryTimer.unref();
    });
  }

  return {
    send(paths) {
      if (paths.length === 0) return;
      for (const path of paths) pending.add(path);
      trim();
      // A retry is waiting: these go with it, not in a request of their own to an endpoint that is down.
      if (!retryTimer && !stopped) flush();
    },
    async stop() {
      stopped = true;
      if (retryTimer) clearTimeout(retryTimer);
      retryTimer = undefined;
      // One last try for what is waiting (bounded by the request timeout), then tell what was not sent.
      if (!inFlight) flush();
      await inFlight;
      if (pending.size > 0)
        log.warn({ paths: pending.size }, `[publish] purge hook: ${pending.size} path(s) not sent before the server stopped`);
    },
    pending: () => pending.size,
  };
}
