/** The rule for links a writer inserts in the visual editor: http(s), mailto and paths on this site, nothing else. */

export type LinkCheck = { ok: true; href: string } | { ok: false; reason: string };

const REASON = 'Use a web address (https://...), an e-mail link (mailto:...) or a path on this site (/...).';

/** Checks a typed link and answers the href to store, or why it is refused. */
export function checkLinkUrl(input: string): LinkCheck {
  const href = input.trim();
  if (!href) return { ok: false, reason: 'Enter a link address.' };
  // Control characters and spaces inside a scheme are how "java\tscript:" slips past naive checks.
  if (/\s/.test(href) || [...href].some((c) => c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127))
    return { ok: false, reason: 'A link address cannot hold spaces or control characters.' };
  if (href.startsWith('/')) return href.startsWith('//') ? { ok: false, reason: REASON } : { ok: true, href };
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return { ok: false, reason: REASON };
  }
  if (url.protocol === 'http:' || url.protocol === 'https:') return url.hostname ? { ok: true, href } : { ok: false, reason: REASON };
  if (url.protocol === 'mailto:')
    return url.pathname.includes('@')
      ? { ok: true, href }
      : { ok: false, reason: 'An e-mail link needs an address: mailto:name@example.com.' };
  return { ok: false, reason: REASON };
}

/** Whether an href met in HTML (pasted or loaded) may stay a link in the visual view. */
export function isAllowedLink(href: string): boolean {
  return checkLinkUrl(href).ok;
}
