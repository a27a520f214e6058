/** The mails of a paid membership (issue 48): the receipt of a payment and the notice of a failed one, on the site's mail shell. */
import type { Config } from '../../config.ts';
import type { BillingInterval } from '../../schemas/member.ts';
import { formatMoney } from '../../lib/money.ts';
import { COLORS, SERIF, escapeHtml, frame, siteUrl, type RenderedMail } from '../mail/templates.ts';

/** What a billing mail says: the member, the amount and the plan, and when the paid period runs to. */
export type BillingMailContent = {
  name: string;
  amount: number;
  currency: string;
  interval: BillingInterval;
  /** ISO: the end of the period paid for (receipt) or of the grace Stripe's retries give (failed). */
  periodEnd: string;
};

/** "3 January 2027", in the site's time zone: a date people read without a clock. */
export function formatMailDate(config: Config, iso: string): string {
  return new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: config.BRIEFING_TZ }).format(
    new Date(iso),
  );
}

function planName(interval: BillingInterval): string {
  return interval === 'year' ? 'yearly' : 'monthly';
}

function greetingOf(name: string): string {
  const trimmed = name.trim();
  return trimmed ? `Hello ${trimmed},` : 'Hello,';
}

function button(url: string, label: string): string {
  return `<p style="margin:0 0 20px;"><a href="${escapeHtml(url)}" style="display:inline-block;background:${COLORS.brand};color:#ffffff;text-decoration:none;padding:12px 20px;border-radius:8px;font-weight:bold;">${escapeHtml(label)}</a></p>`;
}

const PARAGRAPH = 'font-size:16px;line-height:1.6;margin:0 0 16px;';

export function renderReceiptMail(config: Config, content: BillingMailContent): RenderedMail {
  const amount = formatMoney(content.amount, content.currency);
  const plan = planName(content.interval);
  const until = formatMailDate(config, content.periodEnd);
  const accountUrl = siteUrl(config, '/account');
  const subject = `Your ${config.SITE_NAME} receipt: ${amount}`;
  const thanks = `Thank you for supporting ${config.SITE_NAME}. We received ${amount} for your ${plan} membership, which now runs until ${until}.`;
  const manage = 'Your account page shows your subscription and lets you change your card or cancel at any time.';
  const html = frame(
    config,
    subject,
    `<h1 style="font-family:${SERIF};font-size:22px;margin:0 0 12px;">Thank you for your payment</h1>
<p style="${PARAGRAPH}">${escapeHtml(greetingOf(content.name))}</p>
<p style="${PARAGRAPH}">${escapeHtml(thanks)}</p>
<p style="${PARAGRAPH}">${escapeHtml(manage)}</p>
${button(accountUrl, 'Open my account')}`,
    `Payments are handled by Stripe; ${escapeHtml(config.SITE_NAME)} never sees your card. Questions about a charge? Reply to this e-mail.`,
  );
  const text = `Thank you for your payment

${greetingOf(content.name)}

${thanks}

${manage}
${accountUrl}

Payments are handled by Stripe; ${config.SITE_NAME} never sees your card. Questions about a charge? Reply to this e-mail.
`;
  return { subject, html, text };
}

export function renderPaymentFailedMail(config: Config, content: BillingMailContent): RenderedMail {
  const amount = formatMoney(content.amount, content.currency);
  const plan = planName(content.interval);
  const until = formatMailDate(config, content.periodEnd);
  const accountUrl = siteUrl(config, '/account');
  const subject = `Your ${config.SITE_NAME} payment did not go through`;
  const failed = `We could not take ${amount} for your ${plan} membership. Stripe will try your card again over the next few days.`;
  const keep = `You keep reading every story until ${until}. To keep your membership after that, update your card: open your account and choose Manage billing.`;
  const html = frame(
    config,
    subject,
    `<h1 style="font-family:${SERIF};font-size:22px;margin:0 0 12px;">Your payment did not go through</h1>
<p style="${PARAGRAPH}">${escapeHtml(greetingOf(content.name))}</p>
<p style="${PARAGRAPH}">${escapeHtml(failed)}</p>
<p style="${PARAGRAPH}">${escapeHtml(keep)}</p>
${button(accountUrl, 'Manage billing')}`,
    `Payments are handled by Stripe; ${escapeHtml(config.SITE_NAME)} never sees your card. If you meant to end your membership, there is nothing to do.`,
  );
  const text = `Your payment did not go through

${greetingOf(content.name)}

${failed}

${keep}
Manage billing: ${accountUrl}

Payments are handled by Stripe; ${config.SITE_NAME} never sees your card. If you meant to end your membership, there is nothing to do.
`;
  return { subject, html, text };
}
