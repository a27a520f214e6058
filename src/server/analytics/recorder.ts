/**
 * Page views batched in memory and added to the store's time buckets every two seconds and on a clean
 * stop (issue 33): a beacon costs a few map increments, a crash loses at most the last flush interval.
 */
import type { Device, ViewCount, ViewDimension, ViewGrain } from '../../schemas/analytics.ts';
import { MAX_RANGE_DAYS } from '../../schemas/analytics.ts';
import { unstoredPartOf, type AnalyticsRepository, type CounterRepository } from '../../store/types.ts';
import { nowMs } from '../clock.ts';
import type { Runtime } from '../runtime.ts';
import { addDays, hourStartMs, isoMinute, newsroomDay } from '../calendar.ts';
import type { Referrer } from './classify.ts';

/** One counted view, classified. `section` is an article's or section page's section, or `(front)`. */
export type PageView = { section: string; articleId?: string | undefined; referrer: Referrer; device: Device };

export const FLUSH_INTERVAL_MS = 2000;
const PRUNE_INTERVAL_MS = 3_600_000;
/** Hour buckets are kept a day longer than the 14 the dashboard reads; minute buckets two hours. */
const KEEP_HOURS_MS = 15 * 86_400_000;
const KEEP_MINUTES_MS = 2 * 3_600_000;

type Log = { error(object: object, message: string): void };

/** A pending count's key: its bucket and what it counts. */
function bucketId(grain: ViewGrain, start: string, dim: ViewDimension, key: string): string {
  return `${grain}\u0000${start}\u0000${dim}\u0000${key}`;
}

export class ViewRecorder {
  readonly #analytics: AnalyticsRepository;
  readonly #timeZone: string;
  readonly #log: Log;
  #pending = new Map<string, ViewCount>();
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #lastPrune = 0;
  #stopped = false;
  /** The buckets of the current minute, worked out once a minute rather than once a view. */
  #minute = { at: -1, minute: '', hour: '', day: '' };
  /** The counts a kind of view adds to in the current minute's batch, so a repeated view is one lookup, not six. */
  #byView = new Map<string, ViewCount[]>();

  readonly #counters: CounterRepository | undefined;
  /** Views per article for the running `views` total, stored with the buckets. */
  #totals = new Map<string, number>();

  /** `counters`: where the articles' running totals go (the server's recorder); without it only the buckets are kept. */
  constructor(analytics: AnalyticsRepository, timeZone: string, log: Log, counters?: CounterRepository) {
    this.#counters = counters;
    this.#analytics = analytics;
    this.#timeZone = timeZone;
    this.#log = log;
  }

  /** Counts one view now (the injectable clock); the timer starts with the first view, so tools that never record never flush. */
  record(view: PageView, at = nowMs()): void {
    const minuteIndex = Math.floor(at / 60_000);
    if (minuteIndex !== this.#minute.at) {
      this.#byView.clear();
      this.#minute = {
        at: minuteIndex,
        minute: isoMinute(minuteIndex * 60_000),
        hour: isoMinute(hourStartMs(at, this.#timeZone)),
        day: newsroomDay(at, this.#timeZone),
      };
    }
    const signature = `${view.section}\t${view.articleId ?? ''}\t${view.referrer.kind}\t${view.referrer.host}\t${view.device}`;
    let counts = this.#byView.get(signature);
    if (!counts) {
      const { minute, hour, day } = this.#minute;
      counts = [
        this.#count('minute', minute, 'section', view.section),
        this.#count('hour', hour, 'section', view.section),
        this.#count('day', day, 'section', view.section),
        this.#count('day', day, 'referrer', `${view.section}\t${view.referrer.kind}\t${view.referrer.host}`),
        this.#count('day', day, 'device', `${view.section}\t${view.device}`),
      ];
      if (view.articleId)
        counts.push(this.#count('hour', hour, 'article', view.articleId), this.#count('day', day, 'article', view.articleId));
      this.#byView.set(signature, counts);
    }
    for (const count of counts) count.views++;
    if (view.articleId && this.#counters) this.#totals.set(view.articleId, (this.#totals.get(view.articleId) ?? 0) + 1);
    if (!this.#timer && !this.#stopped) {
      this.#timer = setInterval(() => void this.flush(), FLUSH_INTERVAL_MS);
      this.#timer.unref();
    }
  }

  /** The pending count of a bucket and key (created at 0). */
  #count(grain: ViewGrain, start: string, dim: ViewDimension, key: string): ViewCount {
    const id = bucketId(grain, start, dim, key);
    let count = this.#pending.get(id);
    if (!count) this.#pending.set(id, (count = { grain, start, dim, key, views: 0 }));
    return count;
  }

  /** Views recorded and not yet stored. */
  get pending(): number {
    let views = 0;
    for (const count of this.#pending.values()) if (count.dim === 'section' && count.grain === 'day') views += count.views;
    return views;
  }

  /** Stores what is pending (one flush at a time); a failed flush keeps its counts for the next one. */
  flush(): Promise<void> {
    this.#flushing ??= this.#flushNow().finally(() => {
      this.#flushing = undefined;
    });
    return this.#flushing;
  }

  async #flushNow(): Promise<void> {
    if (this.#pending.size > 0) {
      const batch = this.#pending;
      this.#pending = new Map();
      // The cached counts belong to the batch being stored.
      this.#byView.clear();
      try {
        await this.#analytics.addViews([...batch.values()].filter((count) => count.views > 0));
      } catch (error) {
        // Put back what was not stored for the next flush (a database down for a moment, a full disk
        // that took some of lowdb's files: those stored are not added twice).
        const unstored = unstoredPartOf<readonly ViewCount[]>(error, [...batch.values()]);
        for (const count of unstored) {
          const id = bucketId(count.grain, count.start, count.dim, count.key);
          const now = this.#pending.get(id);
          if (now) now.views += count.views;
          else this.#pending.set(id, { ...count });
        }
        this.#log.error({ err: error, counts: unstored.length }, 'page views not stored yet; retrying at the next flush');
      }
    }
    if (this.#totals.size > 0 && this.#counters) {
      const totals = this.#totals;
      this.#totals = new Map();
      try {
        await this.#counters.addViews(totals);
      } catch (error) {
        const unstored = unstoredPartOf<ReadonlyMap<string, number>>(error, totals);
        for (const [id, views] of unstored) this.#totals.set(id, (this.#totals.get(id) ?? 0) + views);
        this.#log.error({ err: error, articles: unstored.size }, "articles' view totals not stored yet; retrying at the next flush");
      }
    }
    const now = nowMs();
    if (this.#timer && now - this.#lastPrune >= PRUNE_INTERVAL_MS) {
      this.#lastPrune = now;
      await this.#prune(now).catch((error: unknown) => this.#log.error({ err: error }, 'old view buckets not pruned'));
    }
  }

  async #prune(now: number): Promise<void> {
    await this.#analytics.prune('minute', isoMinute(now - KEEP_MINUTES_MS));
    await this.#analytics.prune('hour', isoMinute(now - KEEP_HOURS_MS));
    await this.#analytics.prune('day', addDays(newsroomDay(now, this.#timeZone), -(MAX_RANGE_DAYS + 2)));
  }

  /** A clean stop: no more timer, and everything pending stored. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
    // A flush that was under way when stop began may have left views recorded meanwhile.
    if (this.#pending.size > 0 || this.#totals.size > 0) await this.flush();
  }
}

const SERVICE = 'view-recorder';

/** The runtime's recorder, made on first use and registered as a service, so stopRuntime() flushes it before the store closes. */
export function viewRecorderOf(runtime: Runtime): ViewRecorder {
  let recorder = runtime.services.get(SERVICE) as ViewRecorder | undefined;
  if (!recorder) {
    recorder = new ViewRecorder(
      runtime.store.analytics,
      runtime.config.BRIEFING_TZ,
      runtime.log.child({ component: 'analytics' }),
      runtime.store.counters,
    );
    runtime.services.set(SERVICE, recorder);
  }
  return recorder;
}
