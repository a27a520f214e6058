/** What readers get of a live article's coverage (issue 35): the page's live block and /article/{slug}/live.json, read from the store. */
import type { Store } from '../store/types.ts';
import type { LiveCoverage, LiveFeed, LiveFeedUpdate, LiveUpdate } from '../schemas/live.ts';
import { htmlToText } from './html.ts';

/** The text htmlToText answers is still escaped the way sanitize-html writes text (&amp; &lt; &gt; &quot;): plain text has none of it. */
function unescapeText(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (_m, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[name]!);
}

/** The file readers' islands poll for new updates, beside the article page. */
export function liveFeedPath(slug: string): string {
  return `/article/${slug}/live.json`;
}

export function toFeedUpdate(update: LiveUpdate): LiveFeedUpdate {
  return {
    id: update.id,
    at: update.createdAt,
    updatedAt: update.updatedAt,
    html: update.bodyHtml,
    // A space after each block, so two paragraphs do not run into one word.
    text: unescapeText(htmlToText(update.bodyHtml.replace(/<\/(?:p|li|h[2-4]|blockquote|figcaption|pre)>|<br\s*\/?>/g, '$& '))),
    isBreaking: update.isBreaking,
    ...(update.image ? { image: update.image } : {}),
    ...(update.imageAlt ? { imageAlt: update.imageAlt } : {}),
  };
}

/** The feed of a coverage and its updates (newest first), the first `limit` of them when given. */
export function toLiveFeed(coverage: LiveCoverage, updates: readonly LiveUpdate[], limit?: number): LiveFeed {
  return {
    status: coverage.endedAt ? 'ended' : 'live',
    startedAt: coverage.startedAt,
    ...(coverage.endedAt ? { endedAt: coverage.endedAt } : {}),
    keyPoints: coverage.keyPoints,
    total: updates.length,
    updates: (limit === undefined ? updates : updates.slice(0, limit)).map(toFeedUpdate),
  };
}

/** An article's live feed, or undefined when it never went live. */
export async function loadLiveFeed(store: Store, articleId: string, limit?: number): Promise<LiveFeed | undefined> {
  const coverage = await store.live.getCoverage(articleId);
  if (!coverage) return undefined;
  return toLiveFeed(coverage, await store.live.listUpdates(articleId), limit);
}
