/**
 * Fetching one RSS source: a conditional GET through the safe fetch, feedparser, and the items
 * written as published articles (new ones created, upstream edits applied, duplicates skipped).
 */
import type { Config } from '../../config.ts';
import { readTagRules } from '../tag-rules.ts';
import { mapMergedTags } from '../../schemas/taxonomy.ts';
import { articleInputSchema, type ArticleRecord } from '../../schemas/article.ts';
import type { NewsSource } from '../../schemas/source.ts';
import { buildArticle } from '../articles.ts';
import { nowIso } from '../clock.ts';
import { AppError, badRequest, notFound, tooManyRequests } from '../errors.ts';
import { computeReadingTime } from '../html.ts';
import { safeFetch, SafeFetchError } from '../net/safe-fetch.ts';
import { emitArticleChanges, trackArticleWrite, type ArticleChange, type Runtime } from '../runtime.ts';
import { timeSlicer } from '../time-slice.ts';
import { startProgress, type ProgressHandle } from './fetch-progress.ts';
import { itemToFields, type ItemFields } from './feed-items.ts';
import { FeedParseError, parseFeed } from './feed-parse.ts';

/** Feeds are text: 5 MB is far above any real feed and bounds memory per fetch. */
export const MAX_FEED_BYTES = 5 * 1024 * 1024;
/** A Retry-After further away than this is treated as this (a feed cannot switch itself off for a month). */
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

const FEED_ACCEPT =
  'application/rss+xml, application/atom+xml, application/rdf+xml;q=0.9, application/xml;q=0.8, text/xml;q=0.8, */*;q=0.5';

export type FetchOutcome = {
  message: string;
  /** Items in the feed that could become articles. */
  fetched: number;
  created: number;
  updated: number;
  notModified: boolean;
};

/** The User-Agent of every fetch this server makes on a user's behalf. */
export function userAgentFor(config: Config): string {
  return `MeridianNews/0.1 (+${config.SITE_URL})`;
}

/**
 * Fetches in flight, by source id, kept on the runtime: the scheduler (server script) and fetch-now
 * (Astro bundle) load separate copies of this module but must never fetch a source twice at once.
 */
function inFlight(runtime: Runtime): Map<string, Promise<FetchOutcome>> {
  return runtime.feedFetches as Map<string, Promise<FetchOutcome>>;
}

/** Whether a fetch of this source is running (the scheduler skips it). */
export function isFetching(runtime: Runtime, sourceId: string): boolean {
  return inFlight(runtime).has(sourceId);
}

/** Waits for every fetch in flight (shutdown must not close the store under one). */
export async function settleFetches(runtime: Runtime): Promise<void> {
  await Promise.allSettled([...inFlight(runtime).values()]);
}

/** Seconds (or an HTTP date) of a Retry-After header as an absolute time, capped. */
export function retryAfterTime(header: string | null, now: number, fallbackMs: number): Date {
  let delay = fallbackMs;
  if (header) {
    const trimmed = header.trim();
    if (/^\d+$/.test(trimmed)) delay = Number(trimmed) * 1000;
    else {
      const date = Date.parse(trimmed);
      if (!Number.isNaN(date)) delay = date - now;
    }
  }
  return new Date(now + Math.min(Math.max(delay, 1000), MAX_RETRY_AFTER_MS));
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * Fetch-now: checks the source can be fetched (404 unknown, 400 api or disabled, 429 while a
 * Retry-After runs), then fetches it, or joins the fetch already running for it.
 */
export async function fetchNewsSource(runtime: Runtime, sourceId: string): Promise<FetchOutcome> {
  const source = await runtime.store.sources.get(sourceId);
  if (!source) throw notFound('News source');
  if (source.type !== 'rss') throw badRequest('API sources are not fetched yet (API (Future))');
  if (!source.enabled) throw badRequest('This news source is disabled; enable it before fetching');
  const running = inFlight(runtime).get(sourceId);
  if (running) return running;
  if (source.retryAfter && Date.parse(source.retryAfter) > Date.now()) {
    const seconds = (Date.parse(source.retryAfter) - Date.now()) / 1000;
    throw tooManyRequests(seconds, `The feed asked to be left alone until ${source.retryAfter}`);
  }
  return runExclusive(runtime, source);
}

/** Fetches a source unless a fetch of it is already running (then joins that one). */
export function runExclusive(runtime: Runtime, source: NewsSource): Promise<FetchOutcome> {
  const map = inFlight(runtime);
  const running = map.get(source.id);
  if (running) return running;
  const progress = startProgress(runtime, source.id, nowIso());
  const task = observeFetch(runtime, source, progress, fetchAndIngest(runtime, source, progress)).finally(() => map.delete(source.id));
  map.set(source.id, task);
  return task;
}

/** One log line and one count per fetch, scheduled or asked for: the source, the result, the counts, the time. */
async function observeFetch(
  runtime: Runtime,
  source: NewsSource,
  progress: ProgressHandle,
  fetching: Promise<FetchOutcome>,
): Promise<FetchOutcome> {
  const started = performance.now();
  const log = runtime.log.child({ component: 'ingest', sourceId: source.id, source: source.name });
  try {
    const outcome = await fetching;
    const result = outcome.notModified ? 'not_modified' : 'ok';
    runtime.metrics.feedFetches.inc({ result });
    const { fetched, created, updated } = outcome;
    progress.finish(nowIso(), outcome.message);
    // A poll that reaches another server right after this answer sees the run done.
    await progress.settled();
    log.info(
      { result, fetched, created, updated, ms: Math.round(performance.now() - started) },
      `[ingest] ${source.name}: ${outcome.message}`,
    );
    return outcome;
  } catch (error) {
    runtime.metrics.feedFetches.inc({ result: 'failed' });
    const message = error instanceof Error ? error.message : String(error);
    progress.fail(nowIso(), message);
    await progress.settled();
    log.warn({ result: 'failed', err: message, ms: Math.round(performance.now() - started) }, `[ingest] ${source.name}: ${message}`);
    throw error;
  }
}

/** Keeps a failure on the source (shown in the admin list, with when the failures in a row began) and answers it as an AppError. */
async function recordFailure(runtime: Runtime, source: NewsSource, error: AppError, change: Partial<NewsSource> = {}): Promise<never> {
  const now = nowIso();
  await runtime.store.sources.update(source.id, {
    lastFetchedAt: now,
    lastError: error.message,
    lastResult: `Failed: ${error.message}`,
    failingSince: source.failingSince ?? now,
    ...change,
  });
  throw error;
}

/** The last fetch's counts in words, kept on the source. */
function describeCounts(progress: ProgressHandle): string {
  const { read, created, updated, skipped, refused } = progress.counts();
  return `Read ${plural(read, 'item')}: ${created} new, ${updated} updated, ${skipped} skipped, ${refused} refused`;
}

async function fetchAndIngest(runtime: Runtime, source: NewsSource, progress: ProgressHandle): Promise<FetchOutcome> {
  const headers: Record<string, string> = { Accept: FEED_ACCEPT };
  if (source.etag) headers['If-None-Match'] = source.etag;
  if (source.lastModified) headers['If-Modified-Since'] = source.lastModified;
  let response;
  try {
    response = await safeFetch(source.url, {
      allowPrivateNetworks: runtime.config.FETCH_ALLOW_PRIVATE_NETWORKS,
      maxBytes: MAX_FEED_BYTES,
      headers,
      userAgent: userAgentFor(runtime.config),
    });
  } catch (error) {
    const message = error instanceof SafeFetchError ? error.message : 'The feed could not be fetched';
    if (!(error instanceof SafeFetchError))
      runtime.log.error({ component: 'ingest', sourceId: source.id, err: error }, '[ingest] unexpected fetch error');
    return recordFailure(runtime, source, new AppError(502, message, { cause: error }));
  }

  if (response.status === 304) {
    await runtime.store.sources.update(source.id, {
      lastFetchedAt: nowIso(),
      lastError: undefined,
      lastResult: 'Feed not modified',
      failingSince: undefined,
      retryAfter: undefined,
    });
    return { message: 'Feed not modified', fetched: 0, created: 0, updated: 0, notModified: true };
  }
  if (response.status === 429 || (response.status === 503 && response.headers.get('retry-after'))) {
    const intervalMs = runtime.config.FEED_FETCH_INTERVAL_MINUTES * 60_000;
    const until = retryAfterTime(response.headers.get('retry-after'), Date.now(), intervalMs);
    const seconds = (until.getTime() - Date.now()) / 1000;
    const error = tooManyRequests(seconds, `The feed server answered ${response.status} and asked to retry after ${until.toISOString()}`);
    return recordFailure(runtime, source, error, { retryAfter: until.toISOString() });
  }
  if (response.status < 200 || response.status > 299) {
    return recordFailure(runtime, source, new AppError(502, `The feed server answered HTTP ${response.status}`));
  }

  progress.phase('reading');
  let parsed;
  try {
    parsed = await parseFeed(response.body, {
      contentType: response.headers.get('content-type') ?? undefined,
      feedUrl: response.url,
      maxBytes: MAX_FEED_BYTES,
    });
  } catch (error) {
    const message = error instanceof FeedParseError ? error.message : 'The feed could not be read';
    if (!(error instanceof FeedParseError))
      runtime.log.error({ component: 'ingest', sourceId: source.id, err: error }, '[ingest] unexpected parse error');
    return recordFailure(runtime, source, new AppError(502, message, { cause: error }));
  }

  const now = nowIso();
  const fieldsList: ItemFields[] = [];
  const seen = new Set<string>();
  // Sanitising a feed's items (up to 200) is work of tens of milliseconds: the loop lets readers in between.
  const slice = timeSlicer();
  for (const item of parsed.items) {
    await slice();
    progress.count('read');
    const fields = itemToFields(item, response.url, now);
    if (!fields) {
      progress.count('refused');
      continue;
    }
    if (seen.has(fields.guid)) {
      progress.count('skipped');
      continue;
    }
    seen.add(fields.guid);
    fieldsList.push(fields);
  }
  // The source may have been deleted or disabled while its feed was downloading.
  const current = await runtime.store.sources.get(source.id);
  if (!current) throw notFound('News source');
  progress.phase('writing');
  const changes = await trackArticleWrite(runtime, async () => {
    const ingested = await ingestItems(runtime, current, fieldsList, now, progress);
    await runtime.store.sources.update(source.id, {
      lastFetchedAt: nowIso(),
      lastError: undefined,
      lastResult: describeCounts(progress),
      failingSince: undefined,
      retryAfter: undefined,
      etag: response.headers.get('etag') ?? undefined,
      lastModified: response.headers.get('last-modified') ?? undefined,
    });
    await emitArticleChanges(runtime, ingested);
    return ingested;
  });
  const created = changes.filter((c) => c.before === undefined).length;
  const updated = changes.length - created;
  let message = `Fetched ${plural(fieldsList.length, 'item')}, ${created} new`;
  if (updated > 0) message += `, ${updated} updated`;
  return { message, fetched: fieldsList.length, created, updated, notModified: false };
}

/** Applies an upstream edit to an ingested article: same id, slug, status, section and publish date. */
function applyUpstreamEdit(existing: ArticleRecord, fields: ItemFields, now: string): ArticleRecord {
  const next: ArticleRecord = {
    ...existing,
    title: fields.title,
    dek: fields.dek,
    bodyHtml: fields.bodyHtml,
    heroImage: fields.heroImage,
    authorName: fields.authorName,
    tags: fields.tags,
    sourceUrl: fields.sourceUrl,
    readingTime: computeReadingTime(fields.bodyHtml),
    updatedAt: now,
    origin: { ...existing.origin!, canonicalUrl: fields.canonicalUrl, fingerprint: fields.fingerprint },
  };
  for (const key of ['dek', 'heroImage', 'sourceUrl'] as const) if (next[key] === undefined) delete next[key];
  if (next.origin && next.origin.canonicalUrl === undefined) delete next.origin.canonicalUrl;
  return next;
}

/**
 * Writes the items of one fetch: an item already ingested from this source (by guid, else link) is
 * updated only when it changed upstream; a link already ingested from any source is skipped.
 */
export async function ingestItems(
  runtime: Runtime,
  source: NewsSource,
  items: ItemFields[],
  now: string,
  progress?: ProgressHandle,
): Promise<ArticleChange[]> {
  const { articles } = runtime.store;
  const changes: ArticleChange[] = [];
  const slice = timeSlicer();
  // A tag an editor merged into another arrives as the other (issue 35): feeds keep the old spelling.
  const rules = await readTagRules(runtime.store);
  for (const raw of items) {
    await slice();
    const fields = { ...raw, tags: mapMergedTags(raw.tags, rules) };
    const existing = await articles.findByOrigin(source.id, fields.guid);
    if (existing) {
      if (existing.origin?.fingerprint === fields.fingerprint) {
        progress?.count('skipped');
        continue;
      }
      const next = applyUpstreamEdit(existing, fields, now);
      await articles.replace(next);
      changes.push({ before: existing, after: next });
      progress?.count('updated');
      continue;
    }
    if (fields.canonicalUrl && (await articles.findByCanonicalUrl(fields.canonicalUrl))) {
      progress?.count('skipped');
      continue;
    }
    const input = articleInputSchema.safeParse({
      title: fields.title,
      dek: fields.dek,
      bodyHtml: fields.bodyHtml,
      heroImage: fields.heroImage,
      section: source.section,
      tags: fields.tags,
      authorName: fields.authorName,
      sourceLabel: source.name.slice(0, 100),
      sourceUrl: fields.sourceUrl,
      status: 'published',
    });
    if (!input.success) {
      runtime.log.warn(
        { component: 'ingest', sourceId: source.id, guid: fields.guid },
        `[ingest] skipped item ${fields.guid} of source ${source.id}: ${input.error.issues[0]?.message ?? 'invalid'}`,
      );
      progress?.count('refused');
      continue;
    }
    const record = await buildArticle(runtime, input.data, now);
    record.publishedAt = fields.publishedAt;
    record.origin = { sourceId: source.id, guid: fields.guid, fingerprint: fields.fingerprint };
    if (fields.canonicalUrl) record.origin.canonicalUrl = fields.canonicalUrl;
    await articles.insert(record);
    changes.push({ before: undefined, after: record });
    progress?.count('created');
  }
  return changes;
}
