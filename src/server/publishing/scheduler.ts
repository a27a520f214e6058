/**
 * Scheduled publishing inside the server: publishes articles whose scheduledFor has passed at
 * start-up and then at least every 30 s (sooner when one is due sooner). publishIfScheduled is
 * compare-and-set, so each article is published exactly once; the article hook regenerates its pages.
 * The same tick notices articles leaving the news sitemap's two-day window. "Due" is read from the
 * server's clock (src/server/clock.ts) at each tick and nothing is remembered between ticks, so a
 * clock that jumps forward publishes at the next tick, and one that jumps back neither publishes an
 * article again (it is no longer scheduled) nor forgets one (it stays scheduled until its time).
 */
import type { Runtime } from '../runtime.ts';
import { publishDueArticles } from '../articles.ts';
import { serviceUnavailableOf } from '../errors.ts';
import { errorMessage, logOncePerMinute } from '../log.ts';
import { nowMs } from '../clock.ts';
import { isNewsworthy, listPublished, NEWS_MAX_URLS, NEWS_SITEMAP_PATH } from './feeds.ts';

export type Scheduler = {
  /** Re-reads the schedule (an article was scheduled or rescheduled), so a near due time is not missed by up to 30 s. */
  reschedule(): void;
  stop(): Promise<void>;
};

const MAX_INTERVAL_MS = 30_000;
const MIN_INTERVAL_MS = 250;
const OUTAGE_RETRY_MS = 2000;

/** When the next scheduled article comes due (ms), if any. */
async function nextDueAt(runtime: Runtime): Promise<number | undefined> {
  const filter = { statuses: ['scheduled'] as const };
  const scheduled = await runtime.store.articles.list(filter, { offset: 0, limit: await runtime.store.articles.count(filter) });
  let next: number | undefined;
  for (const article of scheduled) {
    const at = article.scheduledFor ? Date.parse(article.scheduledFor) : NaN;
    if (Number.isFinite(at) && (next === undefined || at < next)) next = at;
  }
  return next;
}

export type SchedulerOptions = {
  enqueue: (paths: string[]) => Promise<void>;
  /** The longest wait between two ticks (tests shorten it to watch a moved clock). @default 30000 */
  maxIntervalMs?: number;
};

export function startScheduler(runtime: Runtime, options: SchedulerOptions): Scheduler {
  const maxIntervalMs = options.maxIntervalMs ?? MAX_INTERVAL_MS;
  const log = runtime.log.child({ component: 'publish' });
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let newsWindow: Set<string> | undefined;

  async function checkNewsWindow(): Promise<void> {
    const now = nowMs();
    const recent = await listPublished(runtime.store, undefined, NEWS_MAX_URLS * 2);
    const inWindow = new Set(
      recent
        .filter((a) => isNewsworthy(a, now))
        .slice(0, NEWS_MAX_URLS)
        .map((a) => a.id),
    );
    // Edits enqueue the news sitemap themselves; this catches published articles ageing out of the window.
    // On the first tick the window may have moved while the server was down (an unchanged file is not rewritten).
    const agedOut = newsWindow === undefined || [...newsWindow].some((id) => !inWindow.has(id) && recent.some((a) => a.id === id));
    if (agedOut) await options.enqueue([NEWS_SITEMAP_PATH]);
    newsWindow = inWindow;
  }

  async function tick(): Promise<void> {
    let outage = false;
    try {
      const published = await publishDueArticles(runtime);
      for (const article of published)
        log.info({ articleId: article.id, slug: article.slug }, `[publish] scheduled article published: ${article.slug}`);
      await checkNewsWindow();
    } catch (error) {
      outage = serviceUnavailableOf(error) !== undefined;
      if (outage)
        logOncePerMinute(
          log,
          'scheduler-unavailable',
          { err: errorMessage(error) },
          `[publish] scheduled publishing waits for the store: ${errorMessage(error)}`,
        );
      else log.error({ err: error }, `[publish] scheduler tick failed: ${errorMessage(error)}`);
    }
    await planNextTick(outage);
  }

  /** After an outage the next tick comes soon: an article that came due meanwhile goes out within seconds of the store's return. */
  async function planNextTick(afterOutage = false): Promise<void> {
    if (stopped) return;
    let delay = afterOutage ? Math.min(OUTAGE_RETRY_MS, maxIntervalMs) : maxIntervalMs;
    try {
      const next = await nextDueAt(runtime);
      // Never longer than the interval, whatever the clock says: a jump forward is noticed at the next tick.
      if (next !== undefined) delay = Math.min(delay, Math.max(MIN_INTERVAL_MS, next - nowMs() + 5));
    } catch {
      // Keep the interval chosen above.
    }
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      running = tick();
    }, delay);
    timer.unref();
  }

  running = tick();
  return {
    reschedule() {
      // A tick in progress plans the next one itself when it ends.
      if (timer && !stopped) void planNextTick();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
