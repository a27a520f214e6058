/** The editor's body diff: HTML to readable text, and word-level changes between two revisions. */
import { describe, expect, it } from 'vitest';
import { bodyText, diffBodies, hasChanges } from '../../src/islands/editor/body-diff.ts';

describe('bodyText', () => {
  it('keeps paragraphs, drops tags and decodes entities', () => {
    expect(bodyText('<p>Fish &amp; <strong>chips</strong></p><ul><li>one</li><li>two&#39;s</li></ul><p>a<br>b&nbsp;c</p>')).toBe(
      "Fish & chips\n\none\n\ntwo's\n\na\nb c",
    );
  });
});

describe('diffBodies', () => {
  it('marks the words that changed, in reading order', () => {
    const parts = diffBodies('<p>The deficit rose by 3 percent.</p>', '<p>The deficit rose by 4 percent.</p>');
    expect(parts.filter((p) => p.kind === 'removed').map((p) => p.text)).toEqual(['3']);
    expect(parts.filter((p) => p.kind === 'added').map((p) => p.text)).toEqual(['4']);
    expect(parts.map((p) => (p.kind === 'added' ? '' : p.text)).join('')).toBe('The deficit rose by 3 percent.');
    expect(parts.map((p) => (p.kind === 'removed' ? '' : p.text)).join('')).toBe('The deficit rose by 4 percent.');
  });

  it('shows an added paragraph as added, and markup-only changes as no change', () => {
    const added = diffBodies('<p>First.</p>', '<p>First.</p><p>Second paragraph.</p>');
    expect(
      added
        .filter((p) => p.kind === 'added')
        .map((p) => p.text)
        .join(''),
    ).toContain('Second paragraph.');
    expect(added.some((p) => p.kind === 'removed')).toBe(false);
    expect(hasChanges(diffBodies('<p>Same <em>words</em>.</p>', '<p>Same <strong>words</strong>.</p>'))).toBe(false);
  });
});
