/** Word count and reading time of a body as the writer types, on the server's rule (200 words a minute, at least 1). */

export type BodyStats = { words: number; minutes: number };

/** Counts the words of body HTML without running or loading anything in it (a <template> is inert). */
export function measureBody(html: string): BodyStats {
  const template = document.createElement('template');
  template.innerHTML = html;
  // Block boundaries separate words even where the markup has no space between them.
  for (const element of template.content.querySelectorAll('p,h2,h3,h4,li,blockquote,figcaption,pre,br')) element.append(' ');
  const text = template.content.textContent ?? '';
  const words = text.split(/\s+/).filter(Boolean).length;
  return { words, minutes: Math.max(1, Math.ceil(words / 200)) };
}
