/** A live update's text as typed, made HTML: plain text becomes paragraphs; HTML is sent as it is (the server sanitises it). */

const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** Whether the text already holds markup (a tag the body allow-list knows, or any element). */
function looksLikeHtml(text: string): boolean {
  return /<([a-z][a-z0-9]*)\b[^>]*>/i.test(text);
}

/** Plain text: blank lines part paragraphs, single line breaks stay breaks. */
export function textToUpdateHtml(text: string): string {
  const trimmed = text.trim();
  if (!trimmed || looksLikeHtml(trimmed)) return trimmed;
  return trimmed
    .split(/\n\s*\n/)
    .map((paragraph) => `<p>${paragraph.trim().split('\n').map(escapeHtml).join('<br>')}</p>`)
    .join('');
}
