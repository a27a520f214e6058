/** Live coverage helpers shared by the article page and the readers' island (issue 35): times, labels, what is new, structured data. */
import type { LiveFeed, LiveFeedUpdate } from '../schemas/live.ts';

/** How often an open live page asks for live.json: with the worker's few hundred milliseconds, an update shows within 5 s. */
export const LIVE_POLL_MS = 2000;

/** Updates the structured data lists (newest first); the page itself shows every one. */
export const LIVE_JSON_LD_UPDATES = 50;

/** Google shows up to 110 characters of a headline. */
const HEADLINE_CHARS = 110;

// Made once: a formatter per call is slow on a page of many updates (issue 36).
const updateDay = new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });
const updateClock = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'UTC' });

/** "Nov 28, 14:05 UTC": fixed locale and time zone, so the static HTML does not depend on where it was built. */
export function formatUpdateTime(iso: string): string {
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return '';
  return `${updateDay.format(time)}, ${updateClock.format(time)} UTC`;
}

/** The anchor of an update on its article page. */
export function updateAnchor(id: string): string {
  return `update-${id}`;
}

/** "1 new update", "3 new updates". */
export function newUpdatesLabel(count: number): string {
  return `${count} new ${count === 1 ? 'update' : 'updates'}`;
}

/**
 * The live.json a reader's page polls, checked without zod (reader pages ship no zod: reader-weight.spec.ts):
 * the file is ours, written by the worker from the parsed records, so its shape is all that is checked.
 */
export function readLiveFeed(value: unknown): Pick<LiveFeed, 'status' | 'updates'> | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { status, updates } = value as { status?: unknown; updates?: unknown };
  if ((status !== 'live' && status !== 'ended') || !Array.isArray(updates)) return undefined;
  const valid = updates.every((u: unknown) => typeof u === 'object' && u !== null && typeof (u as { id?: unknown }).id === 'string');
  return valid ? { status, updates: updates as LiveFeedUpdate[] } : undefined;
}

/** The feed's updates a reader has not got yet (not among `known`), newest first, as the feed orders them. */
export function unseenUpdates(feed: Pick<LiveFeed, 'updates'>, known: ReadonlySet<string>): LiveFeedUpdate[] {
  return feed.updates.filter((update) => !known.has(update.id));
}

/** An update's headline for structured data: its first sentence, cut to what Google shows. */
export function headlineOf(text: string): string {
  const sentence = /^(.+?[.!?])(\s|$)/.exec(text)?.[1] ?? text;
  return sentence.length > HEADLINE_CHARS ? `${sentence.slice(0, HEADLINE_CHARS - 1).trimEnd()}…` : sentence;
}

/**
 * The LiveBlogPosting fields of a live article's JSON-LD (schema.org/LiveBlogPosting): when the coverage
 * started and ended, and its newest updates as BlogPosting entries with headline, datePublished and articleBody.
 */
export function liveJsonLd(
  live: LiveFeed,
  url: string,
  absolute: (path: string) => string,
  articleModified: string,
): Record<string, unknown> {
  // The page changes with every update: its newest one (or the end) is its last modification.
  const times = [articleModified, live.endedAt ?? '', ...live.updates.map((u) => u.updatedAt)];
  const dateModified = times.reduce((latest, time) => (time > latest ? time : latest), '');
  return {
    dateModified,
    coverageStartTime: live.startedAt,
    ...(live.endedAt ? { coverageEndTime: live.endedAt } : {}),
    liveBlogUpdate: live.updates.slice(0, LIVE_JSON_LD_UPDATES).map((update) => ({
      '@type': 'BlogPosting',
      headline: headlineOf(update.text),
      datePublished: update.at,
      dateModified: update.updatedAt,
      articleBody: update.text,
      url: `${url}#${updateAnchor(update.id)}`,
      ...(update.image ? { image: absolute(update.image) } : {}),
    })),
  };
}
