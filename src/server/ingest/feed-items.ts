/** Turns one parsed feed item into the fields of an article: text cleaned, HTML sanitised, links resolved. */
import { createHash } from 'node:crypto';
import type FeedParser from 'feedparser';
import { htmlToText, sanitizeBodyHtml } from '../html.ts';

export const MAX_DEK_LENGTH = 300;
const MAX_TITLE_LENGTH = 300;
const MAX_AUTHOR_LENGTH = 100;
const MAX_TAG_LENGTH = 50;
const MAX_TAGS = 30;
const MAX_URL_LENGTH = 2048;
/** The article body limit of the editor (articleInputSchema); longer items are cut before sanitising. */
const MAX_BODY_LENGTH = 500_000;

/** What an item contributes to its article, before it meets the store. */
export type ItemFields = {
  /** Identity of the item within its source: its guid, else its link. */
  guid: string;
  /** The normalised item link, the key for de-duplication across sources. */
  canonicalUrl: string | undefined;
  title: string;
  dek: string | undefined;
  bodyHtml: string;
  authorName: string;
  tags: string[];
  heroImage: string | undefined;
  sourceUrl: string | undefined;
  publishedAt: string;
  /** Hash of the upstream fields: a change means the item was edited upstream. */
  fingerprint: string;
};

/** Query parameters that only track the reader and never change the page. */
const TRACKING_PARAM = /^(utm_[a-z_]+|fbclid|gclid|dclid|msclkid|mc_cid|mc_eid|_ga|igshid|ocid|cmpid)$/i;

/**
 * Plain text of an HTML fragment for title, dek, author and tags (rendered escaped later).
 * htmlToText decodes every entity and re-escapes only these four, so undoing them gives the text.
 */
export function plainText(html: string): string {
  return htmlToText(html)
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');
}

/** An absolute http(s) URL resolved against `base`, or undefined. */
function httpUrlOf(value: unknown, base?: string): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  try {
    const url = new URL(value.trim(), base);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    if (url.username || url.password) return undefined;
    return url.href.length <= MAX_URL_LENGTH ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The identity of a link across feeds: lowercase host, no default port, no fragment, no tracking
 * parameters, remaining parameters sorted. Two feeds linking the same story agree on it.
 */
export function canonicalizeUrl(link: string): string | undefined {
  const href = httpUrlOf(link);
  if (!href) return undefined;
  const url = new URL(href);
  url.hash = '';
  const kept = [...url.searchParams].filter(([key]) => !TRACKING_PARAM.test(key)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  url.search = new URLSearchParams(kept).toString();
  return url.href;
}

/** Plain text cut at a word boundary with an ellipsis. */
export function truncateText(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).replace(/[\s,.;:!?-]+$/, '')}…`;
}

function asArray<T>(value: T | T[] | undefined | null): T[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

function dimension(value: unknown): number | undefined {
  const n = Number.parseInt(String(value ?? ''), 10);
  return Number.isFinite(n) ? n : undefined;
}

/** Tracking pixels (1x1) are not pictures. */
function isPixel(width: number | undefined, height: number | undefined): boolean {
  return (width !== undefined && width <= 2) || (height !== undefined && height <= 2);
}

type MediaContent = { '@'?: { url?: string; type?: string; medium?: string; width?: string; height?: string } };

/** The hero image: media:content, then an image enclosure, then the feed's item image, then the first <img> of the body. */
export function pickHeroImage(item: FeedParser.Item, bodyHtml: string, base: string | undefined): string | undefined {
  const media = asArray((item as unknown as Record<string, MediaContent | MediaContent[] | undefined>)['media:content'])
    .map((m) => m['@'] ?? {})
    .filter(
      (a) =>
        a.url &&
        (a.medium === 'image' ||
          /^image\//i.test(a.type ?? '') ||
          (!a.type && !a.medium && /\.(jpe?g|png|webp|avif|gif)(\?|$)/i.test(a.url))),
    )
    .filter((a) => !isPixel(dimension(a.width), dimension(a.height)))
    .sort((a, b) => (dimension(b.width) ?? 0) - (dimension(a.width) ?? 0));
  for (const candidate of media) {
    const url = httpUrlOf(candidate.url, base);
    if (url) return url;
  }
  for (const enclosure of item.enclosures ?? []) {
    if (/^image\//i.test(enclosure.type ?? '')) {
      const url = httpUrlOf(enclosure.url, base);
      if (url) return url;
    }
  }
  const itemImage = httpUrlOf(item.image?.url, base);
  if (itemImage) return itemImage;
  for (const match of bodyHtml.matchAll(/<img\b[^>]*>/gi)) {
    const tag = match[0];
    const src = /\bsrc="([^"]+)"/i.exec(tag)?.[1];
    const width = dimension(/\bwidth="([^"]+)"/i.exec(tag)?.[1]);
    const height = dimension(/\bheight="([^"]+)"/i.exec(tag)?.[1]);
    if (!src || isPixel(width, height)) continue;
    const url = httpUrlOf(src.replace(/&amp;/g, '&'), base);
    if (url) return url;
  }
  return undefined;
}

/** A publish date from the item: missing, invalid or future dates become `now`. */
function publishedAtOf(item: FeedParser.Item, now: string): string {
  const date = item.pubdate ?? item.date;
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) return now;
  const iso = date.toISOString();
  return iso > now ? now : iso;
}

function tagsOf(item: FeedParser.Item): string[] {
  const seen = new Map<string, string>();
  for (const raw of item.categories ?? []) {
    const tag = plainText(String(raw)).slice(0, MAX_TAG_LENGTH).trim();
    if (tag && !seen.has(tag.toLowerCase())) seen.set(tag.toLowerCase(), tag);
  }
  return [...seen.values()].slice(0, MAX_TAGS);
}

const BLOCK_TAG = /<(p|h[2-4]|ul|ol|blockquote|figure|pre)\b/i;

/** Many feeds send bare text (with <br>s); the article body is paragraphs, like the editor's. */
export function toParagraphs(html: string): string {
  if (html === '' || BLOCK_TAG.test(html)) return html;
  return html
    .split(/\n\s*\n|(?:<br\s*\/?>\s*){2,}/i)
    .map((part) => part.replace(/^(\s|<br\s*\/?>)+|(\s|<br\s*\/?>)+$/gi, '').replace(/\s*\n\s*/g, ' '))
    .filter((part) => part !== '')
    .map((part) => `<p>${part}</p>`)
    .join('\n');
}

/**
 * The article fields of one feed item, or undefined for an item with nothing to show (no title,
 * no text) or no identity (no guid and no link).
 */
export function itemToFields(item: FeedParser.Item, feedUrl: string, now: string): ItemFields | undefined {
  const link = httpUrlOf(item.link, feedUrl) ?? httpUrlOf(item.origlink, feedUrl);
  const guid = (typeof item.guid === 'string' && item.guid.trim()) || link || (typeof item.link === 'string' && item.link.trim()) || '';
  if (!guid) return undefined;
  const contentHtml = typeof item.description === 'string' ? item.description : '';
  const summaryHtml = typeof item.summary === 'string' ? item.summary : '';
  const bodyHtml = toParagraphs(sanitizeBodyHtml((contentHtml || summaryHtml).slice(0, MAX_BODY_LENGTH)));
  const summaryText = plainText(summaryHtml || contentHtml);
  const dek = summaryText ? truncateText(summaryText, MAX_DEK_LENGTH) : undefined;
  let title = plainText(typeof item.title === 'string' ? item.title : '');
  // RSS 2.0 allows items without a title; the start of the text stands in for it.
  if (!title) title = summaryText ? truncateText(summaryText, 100) : '';
  if (!title) return undefined;
  title = truncateText(title, MAX_TITLE_LENGTH);
  const fields = {
    guid: guid.slice(0, MAX_URL_LENGTH),
    canonicalUrl: link ? canonicalizeUrl(link) : undefined,
    title,
    dek: dek && dek !== title ? dek : undefined,
    bodyHtml,
    authorName: truncateText(plainText(typeof item.author === 'string' ? item.author : ''), MAX_AUTHOR_LENGTH),
    tags: tagsOf(item),
    heroImage: pickHeroImage(item, bodyHtml, link ?? feedUrl),
    sourceUrl: link,
    publishedAt: publishedAtOf(item, now),
  };
  const fingerprint = createHash('sha256')
    .update(JSON.stringify([fields.title, fields.dek, fields.bodyHtml, fields.authorName, fields.tags, fields.heroImage, fields.sourceUrl]))
    .digest('hex')
    .slice(0, 32);
  return { ...fields, fingerprint };
}
