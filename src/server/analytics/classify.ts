/** What a page-view beacon is about: the page (front, section, article slug), the referrer's kind and host, the reader's device class. */
import { isbot } from 'isbot';
import type { Device, ReferrerKind } from '../../schemas/analytics.ts';
import { SECTIONS } from '../../schemas/common.ts';

export type PageTarget = { kind: 'front' } | { kind: 'section'; section: string } | { kind: 'article'; slug: string };

/** The pages that count a view: the front page, a section's pages and an article (other paths are accepted and not counted). */
export function classifyPath(path: string): PageTarget | undefined {
  const pathname = path.split(/[?#]/, 1)[0]!;
  if (pathname === '/' || pathname === '/index.html') return { kind: 'front' };
  const section = /^\/section\/([a-z]+)(?:\/.*)?$/.exec(pathname);
  if (section && (SECTIONS as readonly string[]).includes(section[1]!)) return { kind: 'section', section: section[1]! };
  const article = /^\/article\/([^/?#]+)\/?$/.exec(pathname);
  if (!article) return undefined;
  try {
    return { kind: 'article', slug: decodeURIComponent(article[1]!) };
  } catch {
    return undefined;
  }
}

/** Known crawlers and tools (isbot's list), and requests that name no agent at all. */
export function isBotAgent(userAgent: string | null | undefined): boolean {
  return !userAgent || isbot(userAgent);
}

/** Coarse, from the user agent: tablets first (iPad, Android without "Mobile"), then phones. */
export function deviceOf(userAgent: string | null | undefined): Device {
  const ua = userAgent ?? '';
  if (/iPad|Tablet|PlayBook|Silk|Kindle|Android(?!.*Mobile)/i.test(ua)) return 'tablet';
  if (/Mobi|iPhone|iPod|Android|Windows Phone|Opera Mini|BlackBerry/i.test(ua)) return 'mobile';
  return 'desktop';
}

const SEARCH = /(^|\.)(google|bing|duckduckgo|yahoo|yandex|baidu|ecosia|startpage|qwant|kagi|naver|seznam)\.[a-z.]+$|^search\.brave\.com$/;
const SOCIAL =
  /(^|\.)(facebook\.com|fb\.me|t\.co|twitter\.com|x\.com|linkedin\.com|lnkd\.in|reddit\.com|instagram\.com|threads\.net|bsky\.app|mastodon\.social|youtube\.com|tiktok\.com|pinterest\.com|news\.ycombinator\.com|tumblr\.com|vk\.com|whatsapp\.com|telegram\.org|t\.me)$/;
const NEWSLETTER_TAGS = new Set(['newsletter', 'briefing', 'email']);

export type Referrer = { kind: ReferrerKind; host: string };

/**
 * Where the reader came from: the campaign tag (`ref`/`utm_source` the briefing adds) first, then the
 * page's referrer; none, or a page of this site, is direct. Only the host is kept, never the path or query.
 */
export function classifyReferrer(tag: string | undefined, referrer: string | undefined, siteHost: string): Referrer {
  const campaign = tag?.trim().toLowerCase();
  if (campaign && NEWSLETTER_TAGS.has(campaign)) return { kind: 'newsletter', host: 'newsletter' };
  let host: string | undefined;
  if (referrer) {
    try {
      const url = new URL(referrer);
      if (url.protocol === 'http:' || url.protocol === 'https:') host = url.hostname.toLowerCase().replace(/^(www|m|l|lm|mobile)\./, '');
    } catch {
      host = undefined;
    }
  }
  if (!host || host === siteHost.replace(/^www\./, '')) return { kind: 'direct', host: '(direct)' };
  if (SEARCH.test(host)) return { kind: 'search', host };
  if (SOCIAL.test(host)) return { kind: 'social', host };
  return { kind: 'other', host: host.slice(0, 253) };
}
