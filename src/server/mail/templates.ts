/** The mails we send, as HTML (inline styles, table layout for mail clients) and plain text, with absolute links. */
import type { Config } from '../../config.ts';
import type { ArticleRecord } from '../../schemas/article.ts';
import { heroImageAttributes } from '../../schemas/image.ts';

/** The site's palette (src/styles/global.css), inlined: mail clients ignore CSS variables. */
export const COLORS = {
  brand: '#0b1f3a',
  text: '#15171a',
  muted: '#4b5260',
  border: '#d9dde3',
  surface: '#f6f7f9',
  link: '#0f4c9c',
  pick: '#fbefd5',
  pickText: '#6b4404',
};
export const SANS = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif";
export const SERIF = "Georgia, 'Iowan Old Style', 'Times New Roman', serif";

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** An absolute URL on the site for a path (links in mail must work outside the site). */
export function siteUrl(config: Config, pathname: string): string {
  return new URL(pathname, config.SITE_URL).href;
}

/** The mail shell: the masthead, the body and a footer, in the inline-styled table layout mail clients need. */
export function frame(config: Config, title: string, inner: string, footer: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light"><title>${escapeHtml(title)}</title>
<style>@media (max-width: 620px) { .container { width: 100% !important; } .pad { padding: 16px !important; } .hero { height: auto !important; } }</style></head>
<body style="margin:0;padding:0;background:${COLORS.surface};color:${COLORS.text};font-family:${SANS};">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:${COLORS.surface};"><tr><td align="center" style="padding:24px 8px;">
<table role="presentation" class="container" width="600" cellpadding="0" cellspacing="0" style="width:600px;max-width:600px;background:#ffffff;border:1px solid ${COLORS.border};border-radius:10px;">
<tr><td class="pad" style="background:${COLORS.brand};color:#ffffff;padding:20px 28px;border-radius:10px 10px 0 0;">
<a href="${escapeHtml(siteUrl(config, '/'))}" style="color:#ffffff;text-decoration:none;font-family:${SERIF};font-size:24px;font-weight:bold;">${escapeHtml(config.SITE_NAME)}</a>
</td></tr>
<tr><td class="pad" style="padding:24px 28px;">${inner}</td></tr>
<tr><td class="pad" style="padding:16px 28px 24px;border-top:1px solid ${COLORS.border};color:${COLORS.muted};font-size:13px;line-height:1.5;">${footer}</td></tr>
</table></td></tr></table></body></html>`;
}

export type RenderedMail = { subject: string; html: string; text: string };

export function renderConfirmationMail(config: Config, confirmUrl: string): RenderedMail {
  const subject = `Confirm your subscription to ${config.SITE_NAME}`;
  const html = frame(
    config,
    subject,
    `<h1 style="font-family:${SERIF};font-size:22px;margin:0 0 12px;">Please confirm your subscription</h1>
<p style="font-size:16px;line-height:1.6;margin:0 0 20px;">Someone (hopefully you) asked to receive the ${escapeHtml(config.SITE_NAME)} morning briefing at this address: the day's essential stories, hand-picked by our editors, every weekday.</p>
<p style="margin:0 0 20px;"><a href="${escapeHtml(confirmUrl)}" style="display:inline-block;background:${COLORS.brand};color:#ffffff;text-decoration:none;padding:12px 20px;border-radius:8px;font-weight:bold;">Confirm my subscription</a></p>
<p style="font-size:14px;line-height:1.6;color:${COLORS.muted};margin:0;">Or open this link: <a href="${escapeHtml(confirmUrl)}" style="color:${COLORS.link};word-break:break-all;">${escapeHtml(confirmUrl)}</a></p>`,
    `If you did not sign up, ignore this e-mail: without a click on the link you will not be subscribed and will not hear from us again. The link works for 7 days.`,
  );
  const text = `Please confirm your subscription

Someone (hopefully you) asked to receive the ${config.SITE_NAME} morning briefing at this address: the day's essential stories, hand-picked by our editors, every weekday.

Confirm your subscription by opening this link:
${confirmUrl}

If you did not sign up, ignore this e-mail: without a click on the link you will not be subscribed and will not hear from us again. The link works for 7 days.
`;
  return { subject, html, text };
}

export type BriefingContent = {
  /** e.g. "Monday, 23 November 2026" in the briefing's time zone. */
  dateLabel: string;
  picks: ArticleRecord[];
  top: ArticleRecord[];
};

export function briefingSubject(config: Config, content: BriefingContent): string {
  const lead = content.picks[0] ?? content.top[0];
  return `${config.SITE_NAME} briefing, ${content.dateLabel}${lead ? `: ${lead.title}` : ''}`.slice(0, 200);
}

/** An article's link in the briefing: `ref=newsletter` tells the page-view beacon where the reader came from (issue 33). */
function articleUrl(config: Config, article: ArticleRecord): string {
  return siteUrl(config, `/article/${encodeURIComponent(article.slug)}?ref=newsletter`);
}

function articleHtml(config: Config, article: ArticleRecord, pick: boolean): string {
  const url = articleUrl(config, article);
  // The 800 px width of a local hero (a mail is at most 600 px wide); external images as they are.
  const hero = article.heroImage ? siteUrl(config, heroImageAttributes(article.heroImage).src) : undefined;
  return `<tr><td style="padding:0 0 22px;">
${pick && hero ? `<a href="${escapeHtml(url)}"><img class="hero" src="${escapeHtml(hero)}" alt="${escapeHtml(article.title)}" width="544" style="display:block;width:100%;max-width:544px;height:auto;border-radius:8px;margin:0 0 10px;border:0;"></a>` : ''}
${pick ? `<span style="display:inline-block;background:${COLORS.pick};color:${COLORS.pickText};font-size:12px;font-weight:bold;padding:2px 8px;border-radius:999px;margin:0 0 6px;">Editor's pick</span>` : ''}
<h3 style="font-family:${SERIF};font-size:19px;line-height:1.3;margin:0 0 6px;"><a href="${escapeHtml(url)}" style="color:${COLORS.text};text-decoration:none;">${escapeHtml(article.title)}</a></h3>
${article.dek ? `<p style="font-size:15px;line-height:1.5;color:${COLORS.muted};margin:0 0 6px;">${escapeHtml(article.dek)}</p>` : ''}
<a href="${escapeHtml(url)}" style="color:${COLORS.link};font-size:14px;">Read more (${article.readingTime} min)</a>
</td></tr>`;
}

function articleText(config: Config, article: ArticleRecord): string {
  const url = articleUrl(config, article);
  return `* ${article.title}\n${article.dek ? `  ${article.dek}\n` : ''}  ${url}\n`;
}

/** The briefing for one recipient (`unsubscribeUrl` is theirs). */
export function renderBriefingMail(config: Config, content: BriefingContent, unsubscribeUrl: string): RenderedMail {
  const subject = briefingSubject(config, content);
  const section = (title: string, articles: ArticleRecord[], pick: boolean) =>
    articles.length === 0
      ? ''
      : `<h2 style="font-family:${SANS};font-size:13px;letter-spacing:0.08em;text-transform:uppercase;color:${COLORS.muted};margin:8px 0 14px;">${title}</h2>
<table role="presentation" width="100%" cellpadding="0" cellspacing="0">${articles.map((a) => articleHtml(config, a, pick)).join('\n')}</table>`;
  const html = frame(
    config,
    subject,
    `<p style="font-size:14px;color:${COLORS.muted};margin:0 0 4px;">${escapeHtml(content.dateLabel)}</p>
<h1 style="font-family:${SERIF};font-size:24px;margin:0 0 20px;">Your morning briefing</h1>
${section("Editors' picks", content.picks, true)}
${section('Top stories', content.top, false)}
<p style="margin:8px 0 0;"><a href="${escapeHtml(siteUrl(config, '/section/world'))}" style="color:${COLORS.link};">More on ${escapeHtml(config.SITE_NAME)}</a></p>`,
    `You receive this because you subscribed to the ${escapeHtml(config.SITE_NAME)} briefing. <a href="${escapeHtml(unsubscribeUrl)}" style="color:${COLORS.link};">Unsubscribe</a> with one click, no sign-in needed.`,
  );
  const text = `${config.SITE_NAME}: your morning briefing
${content.dateLabel}
${content.picks.length ? `\nEDITORS' PICKS\n\n${content.picks.map((a) => articleText(config, a)).join('\n')}` : ''}${content.top.length ? `\nTOP STORIES\n\n${content.top.map((a) => articleText(config, a)).join('\n')}` : ''}
--
You receive this because you subscribed to the ${config.SITE_NAME} briefing.
Unsubscribe: ${unsubscribeUrl}
`;
  return { subject, html, text };
}
