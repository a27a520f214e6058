/** The mails of members' accounts (issue 48): the sign-in link (for a new or a known address) and the welcome after the first sign-in. */
import type { Config } from '../../config.ts';
import { COLORS, SERIF, escapeHtml, frame, siteUrl, type RenderedMail } from '../mail/templates.ts';

/** How long a sign-in link works, in the words the mail uses (the TTL itself is in accounts.ts). */
const LINK_LIFETIME_WORDS = '1 hour';

function button(url: string, label: string): string {
  return `<p style="margin:0 0 20px;"><a href="${escapeHtml(url)}" style="display:inline-block;background:${COLORS.brand};color:#ffffff;text-decoration:none;padding:12px 20px;border-radius:8px;font-weight:bold;">${escapeHtml(label)}</a></p>`;
}

function rawLink(url: string): string {
  return `<p style="font-size:14px;line-height:1.6;color:${COLORS.muted};margin:0;">Or open this link: <a href="${escapeHtml(url)}" style="color:${COLORS.link};word-break:break-all;">${escapeHtml(url)}</a></p>`;
}

function heading(text: string): string {
  return `<h1 style="font-family:${SERIF};font-size:22px;margin:0 0 12px;">${escapeHtml(text)}</h1>`;
}

function paragraph(html: string): string {
  return `<p style="font-size:16px;line-height:1.6;margin:0 0 20px;">${html}</p>`;
}

/**
 * The one-time link that signs a reader in. A new address reads "create your account", a known one
 * "sign in"; the footer says what to do when the reader did not ask (nothing happens without a click).
 */
export function renderSignInLinkMail(config: Config, link: string, isNew: boolean): RenderedMail {
  const site = config.SITE_NAME;
  const subject = isNew ? `Confirm your e-mail to create your ${site} account` : `Your sign-in link for ${site}`;
  const title = isNew ? 'Create your account' : 'Sign in to your account';
  const intro = isNew
    ? `Someone (hopefully you) asked to create a ${site} account with this address. Open the link below to confirm it and sign in: no password needed.`
    : `Someone (hopefully you) asked to sign in to ${site} with this address. Open the link below to sign in: no password needed.`;
  const label = isNew ? 'Create my account' : 'Sign me in';
  const footer = `If you did not ask for this, ignore this e-mail: without a click on the link nothing happens. The link works once, for ${LINK_LIFETIME_WORDS}.`;
  const html = frame(
    config,
    subject,
    `${heading(title)}\n${paragraph(escapeHtml(intro))}\n${button(link, label)}\n${rawLink(link)}`,
    escapeHtml(footer),
  );
  const text = `${title}

${intro}

${label} by opening this link:
${link}

${footer}
`;
  return { subject, html, text };
}

/** Sent once, after the first sign-in: what an account gives and where to change it. */
export function renderWelcomeMail(config: Config, name: string, newsletter: boolean): RenderedMail {
  const site = config.SITE_NAME;
  const subject = `Welcome to ${site}`;
  const account = siteUrl(config, '/account');
  const greeting = name.trim() ? `Welcome, ${name.trim()}` : 'Welcome';
  const intro = `Your ${site} account is ready. Stories for members are open to you whenever you are signed in, and you can join the conversation under any article.`;
  const briefing = newsletter
    ? 'You also receive our morning briefing: the day’s essential stories, every weekday.'
    : 'You can also receive our morning briefing, the day’s essential stories every weekday: switch it on in your account.';
  const manage = 'Change your name or newsletter choice, export your data or delete your account at any time on your account page.';
  const footer = `You receive this because an account was created for this address on ${site}.`;
  const html = frame(
    config,
    subject,
    `${heading(`${greeting}!`)}
${paragraph(escapeHtml(intro))}
${paragraph(escapeHtml(briefing))}
${paragraph(escapeHtml(manage))}
${button(account, 'Go to my account')}`,
    escapeHtml(footer),
  );
  const text = `${greeting}!

${intro}

${briefing}

${manage}
Your account: ${account}

--
${footer}
`;
  return { subject, html, text };
}
