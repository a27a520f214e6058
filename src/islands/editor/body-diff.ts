/** A readable diff of two article bodies (issue 14): HTML reduced to paragraphs of text, compared word by word with jsdiff. */
import { diffWordsWithSpace } from 'diff';

export type DiffPart = { kind: 'same' | 'added' | 'removed'; text: string };

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" };

/** The text a reader sees in body HTML: one paragraph per block element, tags dropped, entities decoded. */
export function bodyText(html: string): string {
  return html
    .replace(/<(br|hr)\b[^>]*>/gi, '\n')
    .replace(/<\/(p|h[1-6]|li|blockquote|figure|figcaption|pre|ul|ol)>/gi, '\n\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#\d+|#x[0-9a-f]+|[a-z]+);/gi, (entity, name: string) => {
      if (name.startsWith('#x') || name.startsWith('#X')) return String.fromCodePoint(parseInt(name.slice(2), 16));
      if (name.startsWith('#') && name !== '#39') return String.fromCodePoint(Number(name.slice(1)));
      return ENTITIES[name.toLowerCase()] ?? entity;
    })
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Word-level differences from `before` to `after` (both body HTML), in reading order. */
export function diffBodies(beforeHtml: string, afterHtml: string): DiffPart[] {
  return diffWordsWithSpace(bodyText(beforeHtml), bodyText(afterHtml)).map((change) => ({
    kind: change.added ? 'added' : change.removed ? 'removed' : 'same',
    text: change.value,
  }));
}

/** Whether a diff has any change at all. */
export function hasChanges(parts: readonly DiffPart[]): boolean {
  return parts.some((p) => p.kind !== 'same');
}
